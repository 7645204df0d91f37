"""Chapter 2's measurement: the s(N) sweep and the fixed costs over the models of a profile,
and ``results/kernel.json``.

:func:`benchmark_models` runs the s(N) sweep (:mod:`cadlib.costs.kernel_timing`) and the
fixed costs (:mod:`.run_fixed_costs`) for every model of a profile; :func:`numbers` and
:func:`paper_numbers` lay out the results file that :func:`cadlib.costs.speedup_curve.load_curve`
reads back, and :func:`write_results` writes it. The splice-equals-decode check is
:mod:`.run_splice_check`.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from pathlib import Path

import torch

from cadlib import paper as _paper
from cadlib.costs.kernel_timing import measure_speedup
from cadlib.decoding.engines import TransformersEngine
from cadlib.models import is_random_init, load_model, model_info
from cadlib.record.results import hardware_info
from cadlib.record.session import Chapter

from .run_fixed_costs import m_star, measure_fixed_costs

__all__ = [
    "trials_for",
    "benchmark_models",
    "paper_numbers",
    "numbers",
    "write_results",
]


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
    """The paper's figures in the layout of :func:`numbers` (the results ``paper`` key)."""
    return dict(
        curves={k: dict(v) for k, v in _paper.KERNEL_CURVES.items()},
        s_small_N_range=[1.1, 1.3],
        fixed_costs={k: {"value": v, "pm": pm} for k, (v, pm) in _paper.FIXED_COSTS.items()},
        m_star=dict(_paper.M_STAR),
    )


def numbers(bench: Mapping, check: Mapping | None = None) -> dict:
    """The ``numbers`` of ``results/kernel.json``: every curve, fixed costs, ``m*``, checks.

    ``primary`` names the default curve of :func:`~cadlib.costs.speedup_curve.load_curve`:
    the largest measured model (the paper's ``bnd_exact`` uses its largest, 7B).
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


def write_results(ch: Chapter, numbers: Mapping, device: str | None = None) -> Path:
    """Write ``results/kernel.json`` (``kernel.<profile>.json``; via
    :meth:`cadlib.record.session.Chapter.write`): ``numbers`` (:func:`numbers`) beside
    :func:`paper_numbers`, labelled with the primary model."""
    return ch.write(
        dict(numbers),
        paper_numbers(),
        model=numbers["primary"],
        tokenizer="none (random token ids)",
        device=device,
    )
