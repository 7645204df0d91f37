"""Same cases, paired: rates with Wilson intervals and paired tests between systems.

Every system of chapter 7 is scored on the same held-out cases, so two systems are compared
case by case (issue 20): a binary outcome (EM, span-only EM, parse, identity, tests passed)
by McNemar's exact test (a two-sided binomial test on the discordant pairs,
``scipy.stats.binomtest``), a per-case number (span IoU) by a paired bootstrap of the mean
difference (seeded, so the interval is the same on every run). All p-values of one chapter are
Holm-adjusted together before anything is called significant, and the level (0.05) is fixed
here, before any comparison is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from cadlib.metrics import wilson_ci

from .scoring import CaseResult

__all__ = [
    "ALPHA",
    "BINARY_METRICS",
    "check_paired",
    "mcnemar_exact",
    "paired_bootstrap",
    "holm",
    "format_p",
    "compare",
    "comparison_table",
    "rates_table",
]

#: Significance level of every paired test (family-wise, Holm), declared before comparing.
ALPHA = 0.05
#: Binary per-case outcomes and their display names; ``None`` = not defined for free-form
#: outputs (a free-form reply has no program, so no parse or span figures).
BINARY_METRICS = {
    "em": "EM",
    "span_em": "span-only EM",
    "parsed": "parses",
    "identity": "identity output",
    "passed": "tests passed",
}
_PROGRAM_ONLY = ("span_em", "parsed", "span_iou")
N_BOOT = 10_000


def check_paired(a: Sequence[CaseResult], b: Sequence[CaseResult]) -> None:
    """Fail unless ``a`` and ``b`` hold the same cases in the same order."""
    ids_a, ids_b = [r.id for r in a], [r.id for r in b]
    if ids_a != ids_b:
        raise ValueError(
            f"not paired: {len(ids_a)} vs {len(ids_b)} cases, first difference "
            f"{next(((x, y) for x, y in zip(ids_a, ids_b, strict=False) if x != y), None)}"
        )


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
    p = binomtest(a_only, n_disc, 0.5).pvalue if n_disc else 1.0
    return {"n": len(a), "a": sum(map(bool, a)), "b": sum(map(bool, b)), "a_only": a_only,
            "b_only": b_only, "p": float(p)}  # fmt: skip


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n_boot: int = N_BOOT,
                     seed: int = 0) -> dict:  # fmt: skip
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
    return {"n": int(d.size), "a": float(x.mean()), "b": float(y.mean()), "diff": float(d.mean()),
            "ci": [float(lo), float(hi)], "p": float(p)}  # fmt: skip


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


def _values(results: Sequence[CaseResult], metric: str) -> list:
    if metric == "passed":
        return [bool(r.passed) for r in results]
    return [getattr(r, metric) for r in results]


def _free_form(results: Sequence[CaseResult]) -> bool:
    return bool(results) and all(r.extra.get("free_form") for r in results)


def compare(systems: Mapping[str, Sequence[CaseResult]], pairs: Sequence[tuple[str, str]],
            metrics: Sequence[str] = ("em", "span_em", "span_iou", "identity", "passed"),
            ) -> list[dict]:  # fmt: skip
    """Paired tests of ``metrics`` for each ``(a, b)`` pair of system names: records with
    ``system_a``, ``system_b``, ``metric``, ``test`` and the test's fields (``a``, ``b`` are
    the two sides' counts or means).

    Binary metrics by :func:`mcnemar_exact`, ``span_iou`` by :func:`paired_bootstrap`;
    metrics a free-form system does not have are skipped. Every record carries ``p_holm``
    (Holm over all records returned) and ``significant`` (``p_holm < ALPHA``).
    """
    out = []
    for a, b in pairs:
        ra, rb = systems[a], systems[b]
        check_paired(ra, rb)
        for metric in metrics:
            if metric in _PROGRAM_ONLY and (_free_form(ra) or _free_form(rb)):
                continue
            if metric == "passed" and any(r.passed is None for r in [*ra, *rb]):
                continue
            if metric == "span_iou":
                t = paired_bootstrap(_values(ra, metric), _values(rb, metric))
                test = "paired bootstrap"
            else:
                t = mcnemar_exact(_values(ra, metric), _values(rb, metric))
                test = "McNemar exact"
            out.append({"system_a": a, "system_b": b, "metric": metric, "test": test, **t})
    for rec, p in zip(out, holm([r["p"] for r in out]), strict=True):
        rec["p_holm"] = p
        rec["significant"] = p < ALPHA
    return out


def _rate(k: int, n: int) -> str:
    lo, hi = wilson_ci(k, n)
    return f"{k}/{n} ({100 * k / n:.0f}%) [{100 * lo:.0f}, {100 * hi:.0f}]" if n else "—"


def comparison_table(comparisons: Sequence[dict]) -> pd.DataFrame:
    """The paired tests as a table: each side's value, the discordant pairs (or the bootstrap
    interval of the difference), p, Holm-adjusted p and the verdict at :data:`ALPHA`."""
    rows = []
    for c in comparisons:
        name = BINARY_METRICS.get(c["metric"], "mean span IoU")
        if c["test"] == "McNemar exact":
            values = f"{c['a']}/{c['n']} vs {c['b']}/{c['n']}"
            detail = f"{c['a_only']} only A, {c['b_only']} only B"
        else:
            values = f"{c['a']:.2f} vs {c['b']:.2f}"
            detail = f"diff {c['diff']:+.2f} [{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}]"
        rows.append({"A": c["system_a"], "B": c["system_b"],
                     "metric": name, "A vs B": values, "discordant / 95% CI": detail,
                     "test": c["test"], "p": format_p(c["p"], c["test"]),
                     "p (Holm)": format_p(c["p_holm"], c["test"]),
                     f"significant at {ALPHA}": "yes" if c["significant"] else "no"})  # fmt: skip
    return pd.DataFrame(rows)


def rates_table(systems: Mapping[str, Sequence[CaseResult]]) -> pd.DataFrame:
    """Every rate of every system on the same cases, ``k/n (%) [Wilson 95% CI]``, and the
    mean span IoU; "—" where a metric does not apply (free-form output, no tests run)."""
    rows = {}
    for name, results in systems.items():
        free, n = _free_form(results), len(results)
        row = {}
        for metric, label in BINARY_METRICS.items():
            if (metric in _PROGRAM_ONLY and free) or (
                metric == "passed" and any(r.passed is None for r in results)
            ):
                row[label] = "—"
            else:
                row[label] = _rate(sum(map(bool, _values(results, metric))), n)
        iou = [r.span_iou for r in results]
        row["mean span IoU"] = "—" if free else f"{float(np.mean(iou)):.2f}"
        rows[name] = row
    frame = pd.DataFrame(rows).T
    frame.index.name = f"system (n = {', '.join(sorted({str(len(v)) for v in systems.values()}))})"
    return frame
