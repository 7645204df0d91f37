"""Fixed costs of a splice and the minimum worthwhile span (paper App. H, Table 1; Table 17).

:func:`measure_fixed_costs` times ``c_mask``, ``c_sync``, ``c_forced`` and the decode step
``tau`` with the same sync-bookended timer as the s(N) sweep; :func:`minimum_span` and
:func:`minimum_span_with_overhead` read ``m*`` off a curve, without and with those costs;
:func:`m_star` gives both for one model, as Table 17 reports them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from cadlib.costs.kernel_timing import prefill_context, random_feed, time_pp
from cadlib.decoding.engines import as_engine

__all__ = [
    "measure_fixed_costs",
    "minimum_span",
    "minimum_span_with_overhead",
    "m_star",
]


def _per_op_seconds(fn, reps: int, sync) -> float:
    """Seconds per call of ``fn`` over ``reps`` back-to-back calls, ``sync``-bookended."""
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - start) / reps


def _stats_ms(values) -> dict:
    a = np.asarray(values) * 1e3
    return dict(
        median=round(float(np.median(a)), 5),
        min=round(float(a.min()), 5),
        max=round(float(a.max()), 5),
        n=len(a),
    )


def measure_fixed_costs(
    engine,
    *,
    P: int,
    seed: int = 0,
    trials: int = 3,
    mask_reps: int = 2000,
    forward_reps: int = 5,
    n_allowed: int = 12,
    forced_lens: Sequence[int] = (3, 5),
) -> dict:
    """The per-op fixed costs of Appendix H (Table 1), in ms: median, min, max over samples.

    ``engine``: an :class:`~cadlib.decoding.engines.Engine`, or a ``transformers`` model (wrapped).

    * ``c_mask``: add a precomputed allowed-id mask (``n_allowed`` ids, the FSM's largest set,
      App. A) to a vocab-sized logits row and take the argmax, on the device and in the dtype
      of the engine's logits.
      Per op, over ``mask_reps`` back-to-back ops; one sample per trial.
    * ``c_sync``: the extra cost per op of reading the argmax back to the host (``.item()``),
      i.e. (mask + argmax + item) minus (mask + argmax). On a GPU this is the CPU<->GPU round
      trip; on CPU the tensor is already in host memory and the cost is a few microseconds.
    * ``c_forced``: one forward of ``k`` forced-template tokens over the ``P``-token cache,
      for each ``k`` in ``forced_lens`` (the paper: 3-5 tokens), cache restored after each.
    * ``tau``: one single-token decode step over the same cache (the unit of Eq. (1)).

    Returns
    -------
    dict
        ``c_mask_ms``, ``c_sync_ms``, ``c_forced_ms`` (all forced lengths pooled),
        ``c_forced_ms_by_len`` ({k: stats}), ``tau_ms``: each ``{median, min, max, n}``;
        plus ``c_forced_over_tau`` and the settings used.
    """
    engine = as_engine(engine)
    device = engine.device
    session, row = prefill_context(engine, P, seed)
    vocab = row.shape[0]
    allowed = torch.randperm(vocab, generator=torch.Generator().manual_seed(seed))[:n_allowed]
    bias = torch.full((vocab,), float("-inf"), dtype=row.dtype, device=device)
    bias[allowed.to(device)] = 0

    def mask_op():
        return (row + bias).argmax()

    def mask_sync_op():
        return (row + bias).argmax().item()

    mask, mask_sync = [], []
    forced: dict[int, list[float]] = {k: [] for k in forced_lens}
    tau: list[float] = []
    with torch.inference_mode():
        for k in forced_lens:  # warm-up: first calls of each shape
            time_pp(session, random_feed(engine, k, seed))
            session.restore(P)
        mask_op(), mask_sync_op()
        for t in range(trials):
            mask.append(_per_op_seconds(mask_op, mask_reps, session.sync))
            mask_sync.append(_per_op_seconds(mask_sync_op, mask_reps, session.sync))
            for r in range(forward_reps):
                ids = random_feed(engine, max([1, *forced_lens]), seed + 1000 * t + r)
                tau.append(time_pp(session, ids[:1]))
                session.restore(P)
                for k in forced_lens:
                    forced[k].append(time_pp(session, ids[:k]))
                    session.restore(P)
    sync = np.asarray(mask_sync) - np.asarray(mask)
    pooled = [x for k in forced_lens for x in forced[k]]
    return dict(
        c_mask_ms=_stats_ms(mask),
        c_sync_ms=_stats_ms(sync),
        c_forced_ms=_stats_ms(pooled),
        c_forced_ms_by_len={int(k): _stats_ms(v) for k, v in forced.items()},
        tau_ms=_stats_ms(tau),
        c_forced_over_tau=round(float(np.median(pooled) / np.median(tau)), 3),
        settings=dict(
            P=P,
            trials=trials,
            mask_reps=mask_reps,
            forward_reps=forward_reps,
            n_allowed=n_allowed,
            forced_lens=list(forced_lens),
            vocab=vocab,
            logits_dtype=str(row.dtype).removeprefix("torch."),
        ),
    )


def minimum_span(
    N: Sequence[int], s: Sequence[float], threshold: float = 1.0, min_n: int = 2
) -> int | None:
    """First span length ``N >= min_n`` with ``s(N) > threshold`` (Table 17: 1 = strict,
    1.5 = safe).

    ``N = 1`` is skipped by default: both paths are then the same single-token forward, so
    ``s(1)`` is timer noise around 1 and a one-token "splice" cannot gain anything (the paper's
    strict ``m* = 2``). ``None`` when no measured ``N`` clears the threshold.
    """
    for n, value in zip(N, s, strict=True):
        if n >= min_n and value > threshold:
            return int(n)
    return None


def minimum_span_with_overhead(
    N: Sequence[int], s: Sequence[float], tau_ms: float, c_ms: float, min_n: int = 2
) -> int | None:
    """First ``N >= min_n`` with ``N*tau > N*tau/s(N) + c`` (App. J's definition of ``m*``).

    ``c`` is the fixed cost a splice adds over decoding the same tokens (ms); ``None`` when no
    measured ``N`` pays for it.
    """
    for n, value in zip(N, s, strict=True):
        if n >= min_n and n * tau_ms > n * tau_ms / value + c_ms:
            return int(n)
    return None


def m_star(summary: Mapping, fixed: Mapping | None = None) -> dict:
    """``m*`` of Table 17 from a curve summary, plus the fixed-cost-aware variant.

    The overhead ``c`` charged to a splice is one forced-template prefill plus one masked,
    synchronised decision step: ``c = c_forced + c_mask + c_sync`` (medians, App. H).
    """
    out = dict(
        strict=minimum_span(summary["N"], summary["s"], 1.0),
        safe=minimum_span(summary["N"], summary["s"], 1.5),
    )
    if fixed is not None:
        c = sum(fixed[k]["median"] for k in ("c_forced_ms", "c_mask_ms", "c_sync_ms"))
        tau = fixed["tau_ms"]["median"]
        out["with_overhead"] = minimum_span_with_overhead(summary["N"], summary["s"], tau, c)
        out["overhead_c_ms"] = round(c, 4)
        out["tau_ms"] = tau
    return out
