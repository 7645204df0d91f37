"""Chapter 6's profiles: the model, the timed and free-run samples, the forward-cost grid and
the accounted corpora of each run (``cpu`` for CI and the book's re-run, ``full`` the evidence
run, ``gpu`` the GPU check's, ``paper`` the paper's setting, ``smoke`` CI's check of the paper
path)."""

from __future__ import annotations

from cadlib.decoding.prompt_lookup import TIMED_PLD

__all__ = ["ACCOUNTED", "PROFILES"]

#: Corpora whose every case the forward accounting covers (no model: seconds, so every profile).
ACCOUNTED = (
    "heval-fix-py",
    "heval-fix-js",
    "heval-fix-java",
    "heval-fix-go",
    "heval-fix-cpp",
    "heval-fix-rust",
    "probeedit",
    "realedits-flask",
)

_TIMED_PLD_PARAMS = dict(pld_num_tokens=TIMED_PLD[0], pld_max_ngram=TIMED_PLD[1])

# ``timing_cases`` / ``free_run_cases``: cases per corpus (a seeded subset; ``None`` = all);
# the timed cases are stratified by output length among those of at most ``timing_max_ids``
# gold ids per corpus (:func:`cadlib.decoding.methods.timed_sample`; ``None``: any length).
# ProbeEdit has no short outputs (its shortest gold is ~760 SmolLM2 ids), so its cap is higher.
# ``grid_contexts`` / ``grid_trials``: the forward-cost grid of the cost model
# (:func:`cadlib.costs.forward_grid.measure_forward_costs`).
# ``threads``: torch CPU threads (``None``: torch's default). The cpu profile uses one: on a
# 2-core machine shared with other jobs, two contended threads made a decode step ~10x slower.
_CPU = dict(
    model="smollm2-135m-instruct",
    dtype="float32",
    attn_implementation="sdpa",
    threads=1,
    timing_cases={"heval-fix-py": 2, "heval-fix-js": 2, "probeedit": 1},
    timing_max_ids={"heval-fix-py": 300, "heval-fix-js": 300, "probeedit": 800},
    free_run_cases={"heval-fix-py": 2, "heval-fix-js": 2, "probeedit": 1},
    repeats=2,
    warmup=1,
    max_new_tokens=48,
    min_span=0,
    **_TIMED_PLD_PARAMS,
    effect_cases=3,
    mask_reps=3000,
    accounting_corpora=ACCOUNTED,
    grid_contexts=(128, 512, 1024, 2048, 3072),
    grid_trials=2,
)

PROFILES = {
    "cpu": _CPU,
    # The first GPU evidence (make gpu-check, issue 30 §3): the forced-oracle timing of the four
    # methods with the paper's 7B shape (random init: forced decoding along a gold needs no
    # trained weights; the Qwen2.5 BPE built offline), bf16, eager, on a small stratified
    # sample; cadlib.cli.gpu_check runs only the timing and its cost grid.
    "gpu": dict(
        model="qwen2.5-7b-random",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=None,
        timing_cases={"heval-fix-py": 3, "heval-fix-js": 3, "probeedit": 2},
        timing_max_ids={"heval-fix-py": 400, "heval-fix-js": 400, "probeedit": 1000},
        free_run_cases={"heval-fix-py": 0, "heval-fix-js": 0, "probeedit": 0},
        repeats=2,
        warmup=1,
        max_new_tokens=48,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=0,
        mask_reps=0,
        accounting_corpora=(),
        grid_contexts=(128, 512, 1024, 2048, 4096),
        grid_trials=2,
    ),
    # The cpu profile's larger timed sample (run once, on a quiet machine; results in
    # results/decoding.full.json): ~3.4x the timed ids of the cpu profile; 45 minutes on the
    # 2 quiet (and slow: a decode step ~110 ms) cores that ran the committed file.
    "full": {
        **_CPU,
        "timing_cases": {"heval-fix-py": 8, "heval-fix-js": 8, "probeedit": 4},
        "timing_max_ids": {"heval-fix-py": 400, "heval-fix-js": 400, "probeedit": 1000},
        "free_run_cases": {"heval-fix-py": 5, "heval-fix-js": 5, "probeedit": 3},
        "effect_cases": 6,
        "grid_contexts": (128, 512, 1024, 2048, 3072, 4096),
        "grid_trials": 4,
    },
    "paper": dict(
        model="Qwen/Qwen2.5-7B-Instruct",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=None,
        timing_cases={"heval-fix-py": None, "heval-fix-js": None, "probeedit": None},
        timing_max_ids=None,
        free_run_cases={"heval-fix-py": None, "heval-fix-js": None, "probeedit": None},
        repeats=5,
        warmup=2,
        max_new_tokens=256,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=30,
        mask_reps=20000,
        accounting_corpora=ACCOUNTED,
        grid_contexts=(128, 512, 1024, 2048, 4096, 8192),
        grid_trials=5,
    ),
    # CI's check of the paper path (make test-smoke): a hub-style model loaded by
    # from_pretrained from a local stand-in (cadlib.models.QWEN2_SMOKE: 2-layer Qwen2), bf16,
    # eager, one case per corpus, short budgets; seconds on CPU, numbers meaningless.
    "smoke": dict(
        model="qwen2-smoke",
        dtype="bfloat16",
        attn_implementation="eager",
        threads=1,
        timing_cases={"heval-fix-py": 1, "heval-fix-js": 1, "probeedit": 1},
        timing_max_ids={"heval-fix-py": 60, "heval-fix-js": 60, "probeedit": 800},
        free_run_cases={"heval-fix-py": 1, "heval-fix-js": 1, "probeedit": 1},
        repeats=1,
        warmup=1,
        max_new_tokens=16,
        min_span=0,
        **_TIMED_PLD_PARAMS,
        effect_cases=1,
        mask_reps=100,
        accounting_corpora=("heval-fix-py",),
        grid_contexts=(64, 256),
        grid_trials=1,
    ),
}
