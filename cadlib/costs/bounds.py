"""Speedup bounds from a cover and an s(N) curve (paper §2.1, §4.2, Table 2, App. J).

A gen token costs one decode step, a copy span of ``N`` tokens ``N / s(N)`` steps:
``bnd_m8`` and ``bnd_mean`` charge every copied token at one speedup (:func:`bound_uniform`),
``bnd_exact`` each span at its own (:func:`bound_exact`), optionally regenerating spans shorter
than a minimum span. ``s`` is read off the curve by
:func:`cadlib.costs.speedup_curve.interpolate_loglinear` with ``clamp_nonpositive`` (a cover may
hold zero-token spans; :func:`_s_of`). Also here: how far a cover leans on the curve's clamped
ends (:func:`curve_coverage`) and the partial reconstruction of the paper's 7B curve
(:func:`paper_reference_curve`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib import paper as _paper
from cadlib.costs import speedup_curve

__all__ = [
    "bound_uniform",
    "bound_exact",
    "line_bounds",
    "bounds_vs_m",
    "curve_coverage",
    "implied_speedup",
    "paper_reference_curve",
]


def _s_of(N: Sequence[float], s: Sequence[float], n) -> np.ndarray:
    """``s(n)`` off the curve ``(N, s)``, ``n <= 0`` reading its first point."""
    return speedup_curve.interpolate_loglinear(N, s, n, clamp_nonpositive=True)


def bound_uniform(T: float, T_gen: float, T_copy: float, s: float) -> float:
    """``T / (T_gen + T_copy / s)``: every copied token at one speedup ``s`` (bnd_m8, bnd_mean)."""
    return T / (T_gen + T_copy / s)


def bound_exact(
    T: float,
    T_gen: float,
    spans: Sequence[int],
    N: Sequence[float],
    s: Sequence[float],
    min_span: int = 1,
) -> float:
    """``T / (T_gen + sum_k N_k / s(N_k))`` over the actual spans (paper §4.2).

    ``min_span`` applies a minimum-span policy (Appendix J): spans shorter than it are
    regenerated instead (cost ``N_k``). ``T_gen`` is the gen-token count *before* that policy.
    """
    spans = np.asarray(spans, dtype=float)
    spliced = spans[(spans >= min_span) & (spans > 0)]
    regenerated = spans[spans < min_span].sum()
    cost = T_gen + regenerated + float(np.sum(spliced / _s_of(N, s, spliced)))
    return float(T / cost)


def line_bounds(summary: Mapping, spans: Sequence[int], N, s, m: int = 8) -> dict:
    """bnd_m8, bnd_mean and bnd_exact of a line-level cover (Table 2), plus the s values used."""
    s_m = float(_s_of(N, s, m))
    s_mean = float(_s_of(N, s, summary["mean"]))
    T, T_gen, T_copy = summary["T"], summary["T_gen"], summary["T_copy"]
    return {
        "s_m8": s_m,
        "s_mean": s_mean,
        "bnd_m8": bound_uniform(T, T_gen, T_copy, s_m),
        "bnd_mean": bound_uniform(T, T_gen, T_copy, s_mean),
        "bnd_exact": float(bound_exact(T, T_gen, spans, N, s)),
    }


def bounds_vs_m(
    line_summary: Mapping,
    line_span_list: Sequence[int],
    token_table: pd.DataFrame,
    N: Sequence[float],
    s: Sequence[float],
) -> pd.DataFrame:
    """Bounds as a function of the minimum span ``m`` (one row per m of ``token_table``):

    * ``line_exact``: line level, spans shorter than ``m`` regenerated (Appendix J policy);
    * ``token_m``: token level, every span charged at ``s(m)`` (the paper's "conservative"
      token-level bound; every token-level span is at least m long);
    * ``token_exact``: token level, each span at its own ``s(N_k)``.
    """
    rows = []
    for row in token_table.itertuples(index=False):
        s_m = float(_s_of(N, s, row.m))
        rows.append(
            {
                "m": row.m,
                "s(m)": s_m,
                "line_exact": bound_exact(
                    line_summary["T"], line_summary["T_gen"], line_span_list, N, s, row.m
                ),
                "token_m": bound_uniform(row.T, row.T_gen, row.T_copy, s_m),
                "token_exact": bound_exact(row.T, row.T_gen, row.spans, N, s),
            }
        )
    return pd.DataFrame(rows)


def curve_coverage(spans: Sequence[int], N: Sequence[float]) -> dict:
    """How much of a cover lies outside the measured span lengths, where ``s`` is held at
    its end values: the share of spans and of copied tokens longer than ``max(N)`` (and
    shorter than ``min(N)``), to say how far a bound leans on clamping."""
    spans = np.asarray(spans, dtype=float)
    lo, hi = float(np.min(N)), float(np.max(N))
    total = spans.sum()
    above, below = spans > hi, (spans > 0) & (spans < lo)
    return {
        "N_min": lo,
        "N_max": hi,
        "spans_above": float(above.mean()) if len(spans) else 0.0,
        "tokens_above": float(spans[above].sum() / total) if total else 0.0,
        "spans_below": float(below.mean()) if len(spans) else 0.0,
        "tokens_below": float(spans[below].sum() / total) if total else 0.0,
    }


def implied_speedup(T: float, T_gen: float, T_copy: float, bound: float) -> float:
    """The ``s`` that makes ``bound_uniform(T, T_gen, T_copy, s) == bound`` (to read the
    paper's curve at its mean span lengths off its published bnd_mean column)."""
    return T_copy / (T / bound - T_gen)


def paper_reference_curve(
    with_implied: bool = True, assumed: Mapping[int, float] | None = None
) -> pd.DataFrame:
    """A partial reconstruction of the paper's Qwen2.5-7B s(N) curve.

    Rows: the two quoted points (s(8) = 6.79, s(512) = 90.5); with ``with_implied``, the
    values s(N_mean) that each corpus's published bnd_mean implies (rounded bounds: about two
    significant digits); and *assumed* small-N points, by default s(1) = 1.0 and s(2) = 1.2
    (§4.1: at N in {1, 2} parallel prefill and AR are "within about 1.1-1.3x"; Table 17: the
    first N with s > 1 is 2); pass ``assumed={}`` for none. The ``source`` column says which
    is which. Good enough to check magnitudes, not to re-derive digits.
    """
    assumed = _paper.S_7B_ASSUMED if assumed is None else assumed
    rows = [{"N": n, "s": v, "source": "quoted (§4.1)"} for n, v in _paper.S_7B_POINTS.items()]
    if with_implied:
        for name, p in _paper.TABLE2.items():
            s = implied_speedup(p["T"], p["T_gen"], p["T_copy"], p["bnd_mean"])
            rows.append({"N": p["mean"], "s": s, "source": f"implied by bnd_mean ({name})"})
    for n, v in assumed.items():
        rows.append({"N": float(n), "s": v, "source": "assumed (§4.1, Table 17)"})
    return pd.DataFrame(rows).sort_values("N", ignore_index=True)
