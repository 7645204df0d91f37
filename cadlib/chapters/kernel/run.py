"""The kernel chapter's run (notebooks/02_kernel.ipynb): profiles, the sweep over models, and
``results/kernel.json``.

:func:`benchmark_models` runs the s(N) sweep (:mod:`cadlib.costs.kernel_timing`) and the
fixed costs (:mod:`.fixed_costs`) for every model of a profile; :func:`kernel_numbers` and
:func:`paper_numbers` lay out the results file that :func:`cadlib.costs.speedup_curve.load_curve`
reads back; :func:`run_summary` is the generated prose of the chapter's conclusion.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import torch

from cadlib import paper as _paper
from cadlib.costs.kernel_timing import N_GRID, measure_speedup
from cadlib.decoding.engines import TransformersEngine
from cadlib.models import SMOLLM2, is_random_init, load_model, model_info
from cadlib.record.provenance import load_caption
from cadlib.record.results import find_results_file, hardware_info
from cadlib.record.session import Chapter

from .fixed_costs import m_star, measure_fixed_costs

__all__ = [
    "answer",
    "GPU_PAIRS",
    "gpu_evidence",
    "gpu_evidence_markdown",
    "PROFILES",
    "trials_for",
    "benchmark_models",
    "paper_numbers",
    "kernel_numbers",
    "run_summary",
    "write_kernel_results",
]

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


def trials_for(params: Mapping, model_name: str) -> int:
    """The trial count of ``model_name``: ``params["trials"]`` is an int or a per-model map."""
    trials = params["trials"]
    if isinstance(trials, Mapping):
        if model_name not in trials:
            raise ValueError(
                f"no trial count for {model_name!r} in trials={dict(trials)}; pass trials=<int>"
            )
        return int(trials[model_name])
    return int(trials)


def benchmark_models(
    params: Mapping,
    device: str = "auto",
    seed: int = 0,
    loaded: Mapping | None = None,
    progress: bool = True,
) -> dict:
    """Run the sweep and the fixed costs for every model of ``params`` (a ``PROFILES`` entry),
    each model behind a :class:`~cadlib.decoding.engines.TransformersEngine` (the engine seam
    that chapter 6b times llama.cpp through).

    ``loaded`` maps model names to models already loaded with the same dtype and attention
    (reused instead of loading again). Returns ``{name: {"curve", "fixed_costs", "m_star",
    "cache_log", "cache_always_restored"}}``, where ``curve`` is the summary of
    :meth:`SpeedupMeasurement.summary` plus a ``meta`` label.
    """
    out = {}
    for name in params["models"]:
        model = (loaded or {}).get(name)
        if model is None:
            model = load_model(
                name,
                device=device,
                dtype=params["dtype"],
                attn_implementation=params["attn_implementation"],
                seed=seed,
            )
        engine, trials = TransformersEngine(model), trials_for(params, name)
        measurement = measure_speedup(
            engine,
            P=params["P"],
            N_grid=params["N_grid"],
            trials=trials,
            warmup=params["warmup"],
            seed=seed,
            shared_ar_run=params["shared_ar_run"],
            logits_to_keep=params["logits_to_keep"],
            min_tokens=params["min_tokens"],
            progress=progress,
            desc=name,
        )
        fixed = measure_fixed_costs(
            engine,
            P=params["P"],
            seed=seed,
            trials=trials,
            mask_reps=params["mask_reps"],
            forward_reps=params["forward_reps"],
        )
        info = engine.info()
        curve = measurement.summary()
        curve["meta"] = dict(
            model=name,
            source="measured",
            random_init=is_random_init(name),
            shape=model_info(model),
            dtype=info["dtype"],
            device=info["device"],
            hardware=hardware_info(info["device"]),
            attn_implementation=info["attn_implementation"],
            **measurement.protocol(),
            profile=params.get("profile"),
        )
        out[name] = dict(
            curve=curve,
            fixed_costs=fixed,
            m_star=m_star(curve, fixed),
            cache_log=measurement.cache_log,
            cache_always_restored=measurement.cache_always_restored,
        )
        del model, engine
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return out


def paper_numbers() -> dict:
    """The paper's figures in the layout of :func:`kernel_numbers` (the results ``paper`` key)."""
    return dict(
        curves={k: dict(v) for k, v in _paper.KERNEL_CURVES.items()},
        s_small_N_range=[1.1, 1.3],
        fixed_costs={k: {"value": v, "pm": pm} for k, (v, pm) in _paper.FIXED_COSTS.items()},
        m_star=dict(_paper.M_STAR),
    )


def kernel_numbers(bench: Mapping, check: Mapping | None = None) -> dict:
    """The ``numbers`` of ``results/kernel.json``: every curve, fixed costs, ``m*``, checks.

    ``primary`` names the default curve of :func:`load_curve`: the largest measured model (the
    paper's ``bnd_exact`` uses its largest, 7B).
    """
    names = list(bench)
    primary = max(names, key=lambda n: bench[n]["curve"]["meta"]["shape"]["parameters"])
    return dict(
        primary=primary,
        curves={n: bench[n]["curve"] for n in names},
        fixed_costs={n: bench[n]["fixed_costs"] for n in names},
        m_star={n: bench[n]["m_star"] for n in names},
        cache_always_restored={n: bench[n]["cache_always_restored"] for n in names},
        splice_check=dict(check) if check is not None else None,
    )


def run_summary(numbers: Mapping, where: str) -> str:
    """Markdown of a run's headline figures per model (s(8), s at the largest N, m*,
    c_forced / tau): what a chapter's conclusion cites, since they change from run to run."""
    lines = []
    for name, c in numbers["curves"].items():
        s = dict(zip(c["N"], c["s"], strict=True))
        s8 = f"s(8) = {s[8]:.1f}×, " if 8 in s else ""
        m, ratio = numbers["m_star"][name], numbers["fixed_costs"][name]["c_forced_over_tau"]
        lines.append(
            f"* **{name}**: {s8}s({c['N'][-1]}) = {c['s'][-1]:.1f}× (max "
            f"{max(c['s']):.1f}×); m* strict / safe = {m['strict']} / {m['safe']}; "
            f"c_forced / tau = {ratio:.2f}"
        )
    return f"**This run** ({where}):\n\n" + "\n".join(lines)


def write_kernel_results(
    ch: Chapter, bench: Mapping, check: Mapping | None, device: str | None = None
) -> Path:
    """Write ``results/kernel.json`` (``kernel.<profile>.json``; via
    :meth:`cadlib.record.session.Chapter.write`)."""
    numbers = kernel_numbers(bench, check)
    return ch.write(
        numbers,
        paper_numbers(),
        model=numbers["primary"],
        tokenizer="none (random token ids)",
        device=device,
    )


#: The GPU check's shapes beside the paper's A100 curves of the same shapes (§4.1).
GPU_PAIRS = {"qwen2.5-1.5b-random": "paper:qwen2.5-1.5b", "qwen2.5-7b-random": "paper:qwen2.5-7b"}


def gpu_evidence(record: Mapping | None = None):
    """s(N) of the committed GPU check (``results/kernel.gpu.json``, ``make gpu-check``) at
    the paper's two N beside the paper's A100 figures, one row per shape and N; ``None`` when
    no GPU run is committed."""
    if record is None:
        path = find_results_file("kernel.gpu.json")
        if not path.exists():
            return None
        record = json.loads(path.read_text())
    rows = []
    for name, paper_name in GPU_PAIRS.items():
        curve, paper = record["numbers"]["curves"].get(name), _paper.KERNEL_CURVES[paper_name]
        if curve is None:
            continue
        ours = dict(zip(curve["N"], curve["s"], strict=True))
        for n, theirs in zip(paper["N"], paper["s"], strict=True):
            rows.append(
                {
                    "shape (random init)": name,
                    "N": n,
                    "s(N) ours": ours.get(n),
                    "s(N) paper, A100": theirs,
                    "ours / paper": ours[n] / theirs if n in ours else None,
                }
            )
    return pd.DataFrame(rows)


def gpu_evidence_markdown(record: Mapping | None = None) -> str:
    """One paragraph on the GPU check: where it ran and under what load, or how to record it."""
    path = find_results_file("kernel.gpu.json")
    if record is None and not path.exists():
        return (
            "**GPU evidence: not recorded yet.** `make gpu-check` measures this chapter's "
            "s(N) at the paper's 1.5B and 7B shapes on one GPU in a few minutes (the "
            "reproduce page says how); its results are shown here once committed."
        )
    record = record or json.loads(path.read_text())
    hw = record["hardware"]
    return (
        f"**GPU evidence** (`make gpu-check`, random-init weights with the published "
        f"shapes, {record['params']['dtype']}, {record['params']['attn_implementation']}; "
        f"{hw.get('gpu', 'no GPU named')}; {record['created'][:10]}). " + load_caption(record)
    )


def answer(numbers: Mapping, where: str) -> str:
    """The chapter's question answered with its own numbers (the opening's **Answer.**): the
    splice check, then s(8), s at the largest N and m* of the primary model."""
    check, name = numbers.get("splice_check"), numbers["primary"]
    c, m = numbers["curves"][name], numbers["m_star"][name]
    s = dict(zip(c["N"], c["s"], strict=True))
    if check is None:
        same = "The splice-equals-decode check did not run in this profile."
    elif check["passed"]:
        same = (
            f"A splice is exactly {check['N']} decode steps here: same logits (largest "
            f"difference {check['max_abs_logit_diff']:.0e}), same keys, and the cache grows by "
            f"{check['len_after_splice'] - check['len_before']} on both paths."
        )
    else:
        same = "**The splice check failed**: a splice is not the decode steps it replaces here."
    s8 = f"s(8) = {s[8]:.1f}× and " if 8 in s else ""
    return (
        f"{same} On {name} ({where}) one forward of N ids is {s8}s({c['N'][-1]}) = "
        f"{c['s'][-1]:.1f}× faster than N decode steps, and a splice pays from N = "
        f"{m['strict']} (s > 1; s > 1.5 from N = {m['safe']})."
    )
