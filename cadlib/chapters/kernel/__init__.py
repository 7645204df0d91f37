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

The package is split along these seams: :mod:`.fixed_costs` (App. H costs and ``m*``),
:mod:`.splice_check` (splice equals AR), :mod:`.chapter` (profiles, the run over models,
``results/kernel.json``) and :mod:`.tables` (the chapter's tables and figure); the package's
public names (``__all__``) are importable from ``cadlib.chapters.kernel``. The s(N) sweep and
its timers are :mod:`cadlib.costs.kernel_timing` (chapter 6b times llama.cpp with them), chapter
6's forward-cost grid :mod:`cadlib.costs.forward_grid`.
"""

from __future__ import annotations

from . import chapter, fixed_costs, splice_check, tables
from .chapter import *  # noqa: F403
from .fixed_costs import *  # noqa: F403
from .splice_check import *  # noqa: F403
from .tables import *  # noqa: F403

__all__ = [
    *chapter.__all__,
    *fixed_costs.__all__,
    *splice_check.__all__,
    *tables.__all__,
]
