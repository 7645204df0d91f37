"""Chapter 2's parameters: ``cpu`` (2 cores, minutes), ``paper`` (the paper's shapes on a GPU),
``gpu`` (the GPU check, ``make gpu-check``) and ``smoke`` (CI's check of the paper path)."""

from cadlib.costs.speedup_curve import N_GRID
from cadlib.models import SMOLLM2

__all__ = ["PROFILES"]

PROFILES = {
    # 2 CPU cores, a few minutes: the 0.5B shape (random init) and the packaged SmolLM2, P=256
    # instead of 1024 (attention over the prefix is a small share of a step at these sizes),
    # N up to 256, 3 trials, one shared AR run per trial, spans below 8 tokens timed
    # ceil(8/N) times per trial (see measure_speedup); one torch thread, like every cpu-profile
    # chapter that runs a model (cadlib.models.set_threads), so that its curve prices the
    # decoder's forwards in chapter 6.
    "cpu": dict(
        models=("qwen2.5-0.5b-random", SMOLLM2),
        attn_implementation="eager",
        dtype="float32",
        threads=1,
        P=256,
        N_grid=N_GRID[:9],
        trials=3,
        warmup=1,
        shared_ar_run=True,
        logits_to_keep=0,
        min_tokens=8,
        mask_reps=2000,
        forward_reps=5,
        check_model=SMOLLM2,
        check_P=64,
        check_N=32,
    ),
    # The paper's setup (§3, Table 1): 1.5B and 7B shapes, bf16, eager, P=1024, t=7/5, on a GPU.
    "paper": dict(
        models=("qwen2.5-1.5b-random", "qwen2.5-7b-random"),
        attn_implementation="eager",
        dtype="bfloat16",
        P=1024,
        N_grid=N_GRID,
        threads=None,
        trials={"qwen2.5-1.5b-random": 7, "qwen2.5-7b-random": 5},
        warmup=1,
        shared_ar_run=False,
        logits_to_keep=0,
        min_tokens=1,
        mask_reps=2000,
        forward_reps=20,
        check_model=SMOLLM2,
        check_P=64,
        check_N=32,
    ),
    # The first GPU evidence (make gpu-check, issue 30 §3): the paper's shapes and dtype, N up to
    # 512 and 3 trials, so that it fits ~3 minutes of one H200 beside chapter 6's timing; the
    # splice check on the 1.5B shape (no SmolLM2 there: its package is not on the GPU runner).
    "gpu": dict(
        models=("qwen2.5-1.5b-random", "qwen2.5-7b-random"),
        attn_implementation="eager",
        dtype="bfloat16",
        P=1024,
        N_grid=N_GRID[:10],
        threads=None,
        trials=3,
        warmup=1,
        shared_ar_run=False,
        logits_to_keep=0,
        min_tokens=1,
        mask_reps=2000,
        forward_reps=10,
        check_model="qwen2.5-1.5b-random",
        check_P=64,
        check_N=32,
    ),
    # CI's check of the paper path (make test-smoke): the paper profile's branches (a
    # random-init Qwen2 model, bf16, eager, per-model trials, no shared AR run, min_tokens=1)
    # on a 2-layer toy Qwen2, P=64, N up to 32, in seconds; timings are meaningless.
    "smoke": dict(
        models=("qwen2-tiny-random",),
        attn_implementation="eager",
        dtype="bfloat16",
        P=64,
        N_grid=N_GRID[:6],
        threads=1,
        trials={"qwen2-tiny-random": 2},
        warmup=1,
        shared_ar_run=False,
        logits_to_keep=0,
        min_tokens=1,
        mask_reps=50,
        forward_reps=2,
        check_model="qwen2-smoke",
        check_P=16,
        check_N=8,
    ),
}
