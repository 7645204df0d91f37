"""Verdicts: how each of our figures stands against the paper's, computed, never written.

Every figure the book sets beside the paper's declares a :class:`Tolerance` in code: what kind
of comparison it is and why. The declarations were written with the results known (this module
was first committed after several chapters had run, and some reasons quote outcomes), so what
they guarantee is not chronology but that the outcome is computed: :func:`judge` computes the
verdict from our value, the paper's and the sample size. Only two kinds can come out either way:

* ``exact`` — a deterministic recount; it agrees when ``|ours - paper| <= atol`` (zero for
  counts, half the last printed digit for a rounded figure), else it **contradicts the paper**;
* ``noise`` — a seeded or sampled rate; a two-sided two-proportion z test at 95 %
  (``|z| <= 1.96``, the standard errors of both rates combined), else it **contradicts**.

The other kinds are shown beside the paper but never counted as evidence, whatever the
numbers: **by construction** (true because of how our system is built, e.g. an FSM that can
only emit parseable programs), **derived from the paper** (computed from the paper's own
numbers: a consistency check, which passes within its declared relative tolerance ``rtol`` and
otherwise comes out as **the paper's numbers disagree with each other**: a finding about the
paper, not evidence about our reproduction), **not comparable** (another model, hardware or
corpus),
**not run here** (needs a GPU or a hub model). A figure the paper does not report is
**beyond the paper**; one whose chapter has not written its results is **not yet run**.
There is deliberately no way to declare the *outcome*: a reason can explain a contradiction,
never turn it into agreement (book/design.md, "Evidence and verification").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "EXACT",
    "WITHIN_NOISE",
    "CONTRADICTS",
    "BY_CONSTRUCTION",
    "DERIVED",
    "PAPER_DISAGREES",
    "NOT_COMPARABLE",
    "NOT_RUN_HERE",
    "BEYOND",
    "NOT_YET_RUN",
    "VERDICTS",
    "EVIDENCE",
    "Tolerance",
    "Verdict",
    "exact",
    "noise",
    "by_construction",
    "derived",
    "not_comparable",
    "not_run_here",
    "beyond",
    "judge",
    "count_line",
    "DERIVED_RTOL",
]

EXACT, WITHIN_NOISE, CONTRADICTS = "exact", "within noise", "contradicts the paper"
BY_CONSTRUCTION, DERIVED = "by construction", "derived from the paper"
PAPER_DISAGREES = "the paper's numbers disagree with each other"
NOT_COMPARABLE, NOT_RUN_HERE = "not comparable", "not run here"
BEYOND, NOT_YET_RUN = "beyond the paper", "not yet run"
#: Every verdict, in the order the count line lists them.
VERDICTS = (
    EXACT,
    WITHIN_NOISE,
    CONTRADICTS,
    BY_CONSTRUCTION,
    DERIVED,
    PAPER_DISAGREES,
    NOT_COMPARABLE,
    NOT_RUN_HERE,
    BEYOND,
    NOT_YET_RUN,
)
#: The verdicts that count as evidence for or against the paper.
EVIDENCE = (EXACT, WITHIN_NOISE, CONTRADICTS)

_KINDS = ("exact", "noise", BY_CONSTRUCTION, DERIVED, NOT_COMPARABLE, NOT_RUN_HERE, BEYOND)
Z_95 = 1.959964  # two-sided 95 % normal quantile


@dataclass(frozen=True)
class Tolerance:
    """How a figure is to be compared, declared in code with its reason.

    ``atol`` (kind ``exact``): the largest difference that still agrees, in the figure's unit.
    ``rtol`` (kind ``derived from the paper``): the largest relative difference at which the
    paper's figure and ours, computed from the paper's own numbers, are still consistent.
    ``scale`` (kind ``noise``): the figure's unit per unit of probability (100 for percent);
    ``n_paper``: the paper's sample size. ``command`` (kind ``not run here``): what runs it,
    empty when nothing in this book does (the reason then says what is missing).
    """

    kind: str
    reason: str = ""
    atol: float = 0.0
    rtol: float = 0.0
    scale: float = 1.0
    n_paper: int | None = None
    command: str = ""

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"unknown tolerance kind {self.kind!r}; expected one of {_KINDS}")
        if self.kind not in ("exact", BEYOND) and not self.reason:
            raise ValueError(f"a {self.kind!r} tolerance needs its reason")
        if self.kind == "noise" and not self.n_paper:
            raise ValueError("a noise tolerance needs the paper's sample size n_paper")


def exact(atol: float = 0.0, reason: str = "") -> Tolerance:
    """A deterministic recount: agrees within ``atol`` (printed precision) or contradicts."""
    return Tolerance("exact", reason, atol=atol)


def noise(n_paper: int, reason: str, scale: float = 100.0) -> Tolerance:
    """A rate estimated from samples on both sides: two-proportion z test at 95 %."""
    return Tolerance("noise", reason, scale=scale, n_paper=n_paper)


def by_construction(reason: str) -> Tolerance:
    return Tolerance(BY_CONSTRUCTION, reason)


#: Default consistency tolerance of a figure derived from the paper's own numbers: the paper
#: prints its figures to two or three significant digits, and 5 % covers that rounding.
DERIVED_RTOL = 0.05


def derived(reason: str, rtol: float = DERIVED_RTOL) -> Tolerance:
    """Computed from the paper's own numbers: consistent within ``rtol`` (relative), else the
    paper's numbers disagree with each other."""
    return Tolerance(DERIVED, reason, rtol=rtol)


def not_comparable(reason: str) -> Tolerance:
    return Tolerance(NOT_COMPARABLE, reason)


def not_run_here(reason: str, command: str = "") -> Tolerance:
    return Tolerance(NOT_RUN_HERE, reason, command=command)


def beyond(reason: str = "") -> Tolerance:
    return Tolerance(BEYOND, reason)


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`judge`: the verdict, the test's arithmetic, the declared reason."""

    verdict: str
    detail: str = ""
    reason: str = ""


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def judge(
    tol: Tolerance,
    ours: float | None,
    paper: float | None,
    n: int | None = None,
    se: float | None = None,
) -> Verdict:
    """The verdict on ``ours`` against ``paper`` under the declared ``tol``.

    ``n`` is our sample size and ``se`` our standard error (in the figure's unit) when the
    chapter recorded one (e.g. clustered by case); otherwise the binomial ``sqrt(p(1-p)/n)``.
    """
    if tol.kind == NOT_RUN_HERE:
        return Verdict(NOT_RUN_HERE, f"run: {tol.command}" if tol.command else "", tol.reason)
    if ours is None:
        return Verdict(NOT_YET_RUN, "", tol.reason)
    if paper is None or tol.kind == BEYOND:
        return Verdict(BEYOND, "", tol.reason)
    if tol.kind == "exact":
        diff = abs(ours - paper)
        ok = diff <= tol.atol + 1e-9
        detail = f"|Δ| = {_fmt(diff)} {'≤' if ok else '>'} {_fmt(tol.atol)}"
        return Verdict(EXACT if ok else CONTRADICTS, detail, tol.reason)
    if tol.kind == "noise":
        return _z_test(tol, ours, paper, n, se)
    if tol.kind == DERIVED and paper:
        return _consistency(tol, ours, paper)
    detail = "" if paper == 0 else f"|Δ| = {_fmt(abs(ours - paper))}"
    return Verdict(tol.kind, detail, tol.reason)


def _consistency(tol: Tolerance, ours: float, paper: float) -> Verdict:
    """A figure recomputed from the paper's own numbers against the one it prints."""
    rel = abs(ours / paper - 1)
    ok = rel <= tol.rtol + 1e-12
    factor = max(ours / paper, paper / ours) if ours and paper else math.inf
    detail = f"|ours / paper - 1| = {rel:.1%} {'≤' if ok else '>'} {tol.rtol:.0%}" + (
        "" if ok else f" (off by {factor:.2g}×)"
    )
    return Verdict(DERIVED if ok else PAPER_DISAGREES, detail, tol.reason)


def _z_test(tol: Tolerance, ours: float, paper: float, n: int | None, se: float | None):
    p1, p2 = ours / tol.scale, paper / tol.scale
    if se is None:
        if not n:
            raise ValueError("a noise comparison needs our n or our standard error")
        se = math.sqrt(p1 * (1 - p1) / n) * tol.scale
    se_paper = math.sqrt(p2 * (1 - p2) / tol.n_paper) * tol.scale
    total = math.hypot(se, se_paper)
    z = (ours - paper) / total if total else (0.0 if ours == paper else math.inf)
    unit = " pp" if tol.scale == 100 else ""
    detail = f"z = {z:.2f}, SE {_fmt(total)}{unit} (two-proportion z, 95 %)"
    return Verdict(WITHIN_NOISE if abs(z) <= Z_95 else CONTRADICTS, detail, tol.reason)


def count_line(verdicts: Iterable[str]) -> str:
    """The summary's first line: evidence first, then what is shown but not counted."""
    counts, total = Counter(verdicts), 0
    parts = []
    for v in VERDICTS:
        if counts[v]:
            parts.append(f"**{counts[v]}** {v}")
            total += counts[v]
    evidence = sum(counts[v] for v in EVIDENCE)
    return (
        f"{', '.join(parts)} — of {total} figures; {evidence} count as evidence "
        f"({', '.join(EVIDENCE)}), the rest are shown and not counted."
    )
