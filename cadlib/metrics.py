"""Exact-match metrics and the interval around a rate: each variant once, under its own name.

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
:mod:`cadlib.chapters.perturbation.noise` and :mod:`cadlib.chapters.decoding.measure`, but
:func:`equal_up_to_one_newline` in :mod:`cadlib.chapters.fim_constraint.experiments` (its chapter
compares bodies whose one trailing newline the resolver strips); the column names are kept because
the results files use them.

:func:`wilson_ci` is the Wilson score interval of a rate (Table 6's CIs); :func:`rate_cell`
shows a rate with it, and :func:`percent` a fraction as a percentage that never rounds to 0 or
100 unless it is.
"""

from __future__ import annotations

import math

__all__ = [
    "percent",
    "rate_cell",
    "byte_equal",
    "strip_one_newline",
    "equal_up_to_one_newline",
    "equal_stripped",
    "wilson_ci",
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
