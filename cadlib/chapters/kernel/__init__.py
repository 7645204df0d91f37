"""The kernel microbenchmark: autoregressive decode vs parallel prefill over a KV cache.

What a copy splice buys (paper §2.4, §3 "Kernel microbenchmark", §4.1): after a ``P``-token
random-context prefill, time

(i) **AR**: ``N`` successive forwards of one token each, appending to the KV cache, and
(ii) **PP**: one forward of the same ``N`` tokens over the same ``P``-token cache,

with a warm-up, ``t`` trials, the median (and the min–max spread) and
``torch.cuda.synchronize`` bookends on a GPU. The per-span speedup is
``s(N) = T_AR(N) / T_PP(N)`` (ratio of the medians) for ``N`` in ``{1, 2, 4, ..., 512}``.
Between trials the cache is cropped back to its ``P``-token state and every crop is logged.

Also here: the fixed costs of Appendix H / Table 1 (:func:`measure_fixed_costs`: ``c_mask``,
``c_sync``, ``c_forced`` and the decode step ``tau``), the minimum worthwhile span ``m*`` of
Table 17 (:func:`minimum_span`), the splice-equals-AR correctness check ("Position-encoding
correctness", :func:`check_splice_equals_ar`). The results-file API that the ceiling chapter
uses for ``bnd_exact`` (``load_curve``, ``speedup_at``, ``curve_label``; **(API)**) lives in
:mod:`cadlib.costs.speedup_curve`.

Reading CPU numbers: speed does not depend on weight values, so random-init models of the
published shapes time exactly like the trained ones. CPU ratios are not GPU ratios, nor a lean
engine's: here a decode step reads fp32 weights, where llama.cpp reads the same model's Q4_1
weights (chapter 6b); the work between forwards is measured in chapter 6 and is small.

The package is split along these seams: :mod:`.timing` (the s(N) sweep and its timers),
:mod:`.fixed_costs` (App. H costs and ``m*``), :mod:`.splice_check` (splice equals AR),
:mod:`.chapter` (profiles, the run over models, ``results/kernel.json``), :mod:`.tables`
(the chapter's tables and figure) and :mod:`.forward_costs` (chapter 6's cost grid); the
package's public names (``__all__``) are importable from ``cadlib.chapters.kernel``.
"""

from __future__ import annotations

from .chapter import (
    GPU_PAIRS,
    PROFILES,
    benchmark_models,
    gpu_evidence,
    gpu_evidence_markdown,
    kernel_numbers,
    paper_numbers,
    run_summary,
    trials_for,
    write_kernel_results,
)
from .fixed_costs import m_star, measure_fixed_costs, minimum_span, minimum_span_with_overhead
from .forward_costs import FORWARD_GRID_N, measure_forward_costs
from .splice_check import check_splice_equals_ar
from .tables import (
    SPLICE_CHECK_FIELDS,
    cache_log_table,
    curve_table,
    fixed_cost_table,
    m_star_table,
    plot_speedup,
    speedup_overview,
    splice_check_table,
    timing_sanity,
)
from .timing import (
    N_GRID,
    SpeedupMeasurement,
    measure_speedup,
    prefill_context,
    random_ids,
    timing_warnings,
)

__all__ = [
    "GPU_PAIRS",
    "gpu_evidence",
    "gpu_evidence_markdown",
    "PROFILES",
    "N_GRID",
    "random_ids",
    "prefill_context",
    "SpeedupMeasurement",
    "timing_warnings",
    "measure_speedup",
    "measure_fixed_costs",
    "minimum_span",
    "minimum_span_with_overhead",
    "m_star",
    "check_splice_equals_ar",
    "trials_for",
    "benchmark_models",
    "kernel_numbers",
    "paper_numbers",
    "write_kernel_results",
    "run_summary",
    "curve_table",
    "fixed_cost_table",
    "m_star_table",
    "cache_log_table",
    "splice_check_table",
    "timing_sanity",
    "speedup_overview",
    "SPLICE_CHECK_FIELDS",
    "plot_speedup",
    "FORWARD_GRID_N",
    "measure_forward_costs",
]
