"""Chapter 2, the kernel microbenchmark: autoregressive decode vs parallel prefill over a KV
cache.

What a copy splice buys (paper §2.4, §3 "Kernel microbenchmark", §4.1): after a ``P``-token
random-context prefill, time

(i) **AR**: ``N`` successive forwards of one token each, appending to the KV cache, and
(ii) **PP**: one forward of the same ``N`` tokens over the same ``P``-token cache,

with a warm-up, ``t`` trials, the median (and the min–max spread) and
``torch.cuda.synchronize`` bookends on a GPU. The per-span speedup is
``s(N) = T_AR(N) / T_PP(N)`` (ratio of the medians) for ``N`` in ``{1, 2, 4, ..., 512}``.
Between trials the cache is cropped back to its ``P``-token state and every crop is logged.

Also here: the fixed costs of Appendix H / Table 1 (``c_mask``, ``c_sync``, ``c_forced`` and
the decode step ``tau``), the minimum worthwhile span ``m*`` of Table 17, and the
splice-equals-AR correctness check ("Position-encoding correctness"). The results-file API that
the ceiling chapter uses for ``bnd_exact`` (``load_curve``, ``speedup_at``, ``curve_label``;
**(API)**) lives in :mod:`cadlib.costs.speedup_curve`.

Reading CPU numbers: speed does not depend on weight values, so random-init models of the
published shapes time exactly like the trained ones. CPU ratios are not GPU ratios, nor a lean
engine's: here a decode step reads fp32 weights, where llama.cpp reads the same model's Q4_1
weights (chapter 6b); the work between forwards is measured in chapter 6 and is small.

The roles: :mod:`.profiles` (``PROFILES``: cpu, paper, gpu, smoke), :mod:`.run` (the sweep over
models, ``numbers`` and ``results/kernel.json``), :mod:`.run_fixed_costs` (App. H costs and
``m*``), :mod:`.run_splice_check` (splice equals AR), :mod:`.show` (tables) and :mod:`.text`
(the Answer, the run's summary, the timing sanity check, the GPU paragraph). The s(N) sweep and
its timers are :mod:`cadlib.costs.kernel_timing` (chapter 6b times llama.cpp with them), the
figure :func:`cadlib.record.style.plot_speedup`, chapter 6's forward-cost grid
:mod:`cadlib.costs.forward_grid`; the GPU check (``make gpu-check``) runs this chapter from
:mod:`cadlib.cli.gpu_check`.
"""

from cadlib.record.card import lazy_roles

from .card import CARD

__all__ = ["CARD"]
__getattr__ = lazy_roles(__name__)
