"""Exact-match metrics, the interval around a rate and the paired tests between two systems.

The paper compares an output with its gold in three ways, and the tables differ in which:

* :func:`byte_equal` — ``a == b``: the strictest reading (Table 4's "byte-exact" column, the
  ``em`` / ``em_exact`` columns of chapters 4-8);
* :func:`equal_up_to_one_newline` — equal after removing at most one trailing newline from
  each side (:func:`strip_one_newline`): the paper's "byte-exact" EM of §3 and §4.3, the
  resolver convention ``r``. It reproduces Table 4 (losslessness, "paper-exact"), Table 3
  (RT-EM of the edit formats) and Table 6 (SFT pilot EM);
* :func:`equal_stripped` — ``a.strip() == b.strip()``: the "trimmed" EM that reproduces
  Table 8 (EM under endpoint noise). It forgives any leading/trailing whitespace, so it is
  never interchangeable with :func:`equal_up_to_one_newline` (``"a\\n\\n"`` vs ``"a"``).

A column named ``em_trimmed`` means :func:`equal_stripped` in
:mod:`cadlib.endpoint_noise` and :mod:`cadlib.chapters.decoding.run_free`, but
:func:`equal_up_to_one_newline` in :mod:`cadlib.chapters.fim_constraint.run_edits` (its chapter
compares bodies whose one trailing newline the resolver strips); the column names are kept because
the results files use them.

:func:`wilson_ci` is the Wilson score interval of a rate (Table 6's CIs); :func:`rate_cell`
shows a rate with it, and :func:`percent` a fraction as a percentage that never rounds to 0 or
100 unless it is.

Two systems scored on the same cases are compared case by case: a binary outcome by
:func:`mcnemar_exact` (a two-sided binomial test on the discordant pairs,
``scipy.stats.binomtest``), a per-case number by :func:`paired_bootstrap` (seeded, so every
interval and p-value is the same on every run). A chapter Holm-adjusts (:func:`holm`) all its
p-values together before it calls anything significant, at :data:`ALPHA`, fixed here before any
comparison is made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "percent",
    "rate_cell",
    "byte_equal",
    "strip_one_newline",
    "equal_up_to_one_newline",
    "equal_stripped",
    "wilson_ci",
    "ALPHA",
    "N_BOOT",
    "mcnemar_exact",
    "paired_bootstrap",
    "format_p",
    "holm",
]


def byte_equal(a: str, b: str) -> bool:
    """``a == b``, byte for byte (Table 4's strict "byte-exact" column)."""
    return a == b


def strip_one_newline(text: str) -> str:
    """``text`` without at most one trailing newline: the paper's tolerant EM (§3)."""
    return text.removesuffix("\n")


def equal_up_to_one_newline(a: str, b: str) -> bool:
    """The paper's byte-exact EM: equal after stripping at most one trailing newline each
    (§3, §4.3; reproduces Table 4's paper-exact, Table 3's RT-EM and Table 6's EM)."""
    return strip_one_newline(a) == strip_one_newline(b)


def equal_stripped(a: str, b: str) -> bool:
    """Trimmed EM, ``a.strip() == b.strip()``: Table 8's metric (EM under endpoint noise)."""
    return a.strip() == b.strip()


def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials (paper Table 6's CIs).

    ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``; ``(nan, nan)`` for n = 0.
    """
    if n == 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest  # lazy: scipy.stats takes ~0.7 s to import

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def _digits(x: float) -> int:
    """The fewest decimals that show the fraction ``x`` as a percentage that is not 0 or 100
    unless ``x`` is."""
    for digits in range(7):
        shown = round(100 * x, digits)
        if not ((shown == 100 and x < 1) or (shown == 0 and x > 0)):
            return digits
    return 6


def percent(x: float, digits: int = 0) -> str:
    """``x`` (a fraction) as a percentage without the sign, with at least ``digits`` decimals
    and as many more as it takes never to show 0 or 100 for a fraction that is not (7970/8000
    is ``"99.6"``, not ``"100"``)."""
    return f"{100 * x:.{max(digits, _digits(x))}f}"


def rate_cell(k: int, n: int) -> str:
    """``"k/n (p%, 95% CI lo-hi%)"`` (Wilson interval, :func:`cadlib.metrics.wilson_ci`;
    percentages by :func:`percent`, the three with the same decimals)."""
    if n == 0:
        return "0/0"
    lo, hi = wilson_ci(int(k), int(n))
    d = max(_digits(k / n), _digits(lo), _digits(hi))
    return f"{k}/{n} ({percent(k / n, d)}%, CI {percent(lo, d)}-{percent(hi, d)}%)"


#: Significance level of every paired test (family-wise, Holm), declared before comparing.
ALPHA = 0.05
#: Resamples of :func:`paired_bootstrap` (its p-value's resolution is 1 / N_BOOT).
N_BOOT = 10_000


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> dict:
    """McNemar's exact test of paired binary outcomes: ``{n, a, b, a_only, b_only, p}``.

    ``a_only`` counts cases where only ``a`` is true; p is two-sided, the binomial test of
    ``a_only`` among the discordant pairs at 1/2 (1.0 when there is none).
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes must have equal length, got {len(a)} and {len(b)}")
    a_only = sum(bool(x) and not bool(y) for x, y in zip(a, b, strict=True))
    b_only = sum(bool(y) and not bool(x) for x, y in zip(a, b, strict=True))
    n_disc = a_only + b_only
    from scipy.stats import binomtest  # lazy, as in wilson_ci

    p = binomtest(a_only, n_disc, 0.5).pvalue if n_disc else 1.0
    return {
        "n": len(a),
        "a": sum(map(bool, a)),
        "b": sum(map(bool, b)),
        "a_only": a_only,
        "b_only": b_only,
        "p": float(p),
    }


def paired_bootstrap(
    a: Sequence[float], b: Sequence[float], n_boot: int = N_BOOT, seed: int = 0
) -> dict:
    """Paired bootstrap of ``mean(a) - mean(b)``: ``{n, a, b, diff, ci, p}``.

    Cases are resampled with replacement (``numpy.random.default_rng(seed)``); ``ci`` is the
    percentile 95% interval of the difference, ``p`` the two-sided bootstrap p-value
    (twice the smaller share of resampled differences on either side of 0, at most 1).
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError(
            f"paired samples must be non-empty and equal in length: {x.size}, {y.size}"
        )
    d = x - y
    rng = np.random.default_rng(seed)
    boot = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    if np.all(d == 0):
        p = 1.0
    else:
        p = min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0)))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {
        "n": int(d.size),
        "a": float(x.mean()),
        "b": float(y.mean()),
        "diff": float(d.mean()),
        "ci": [float(lo), float(hi)],
        "p": float(p),
    }


def format_p(p: float, test: str = "") -> str:
    """A p-value for prose and tables: three significant digits, and for a bootstrap p of 0
    its resolution instead (``< 1/N_BOOT``: no resampled difference crossed 0, which bounds p,
    it does not make it 0)."""
    if test == "paired bootstrap" and p < 1 / N_BOOT:
        return f"< {1 / N_BOOT:g}"
    return f"{p:.3g}"


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error) of ``pvalues``, in their order."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda k: pvalues[k])
    adjusted, running = [0.0] * m, 0.0
    for rank, k in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[k]))
        adjusted[k] = running
    return adjusted
