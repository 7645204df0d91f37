"""Chapter 3, the copy ceiling: copy ceilings and speedup bounds (paper §3 "Copy ceiling",
§4.2, Table 2, Appendices D, L, M, N).

Two covers of each gold output by its input document, both data properties (no model run):

* **line level** (the ``<copy lines="i-j"/>`` primitive): the oracle program of
  :func:`cadlib.oracle.oracle_program`; a copy span's length ``N_k`` is the number of Qwen2.5
  tokens of its lines joined by newlines, ``T`` the tokens of the gold, ``T_copy = sum N_k``
  and ``T_gen = T - T_copy`` (this absorbs the joining newlines and tokenization seams, and
  is how the paper's Table 2 columns add up: 8,872 = 6,577 + 2,295);
* **token level** (aspirational ``<copy tokens="a-b"/>``): the greedy left-to-right
  longest-match cover with minimum span ``m`` of :func:`cadlib.oracle.token_cover` over the
  Qwen2.5 ids of document and gold.

The cost model (paper §2.1, §4.2) turns a cover into a wall-clock bound: a gen token costs one
decode step, a copy span of ``N`` tokens ``N / s(N)`` steps, where ``s(N)`` is the measured
parallel-prefill speedup (the kernel chapter's curve). Three bounds:

* ``bnd_m8    = T / (T_gen + T_copy / s(8))``       (every span charged at s(m=8));
* ``bnd_mean  = T / (T_gen + T_copy / s(N_mean))``   (Amdahl summary at the mean span);
* ``bnd_exact = T / (T_gen + sum_k N_k / s(N_k))``   (the paper's primary claim),

with ``s`` interpolated linearly in ``log N`` between measured points and held at the end
values outside them. A zero-token span (a copied empty line) adds nothing to the sum.
Curves are plain arrays ``(N, s)`` here, so a curve measured anywhere (our CPU run, a GPU
run, or the paper's published points) can be passed in; :mod:`cadlib.costs.speedup_curve` reads
them from ``results/kernel.json`` and does the interpolation.

The roles: :mod:`.profiles` (``PROFILES``), :mod:`.run` (the chapter's run :func:`.run.analyse`,
``numbers`` and ``results/ceiling.json``), :mod:`.run_covers` (the token-level covers),
:mod:`.run_percentiles` (the p50 / p95 investigation), :mod:`.run_estimates` (Appendices L and
M), :mod:`.show` (tables), :mod:`.show_figures` (figures) and :mod:`.text` (the Answer, the
findings, the conclusion). The span statistics it bounds live in :mod:`cadlib.costs.spans`, the
three bounds, curve coverage and the paper's reconstructed curve in :mod:`cadlib.costs.bounds`
(chapter 6 prices its cases with them too).
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
