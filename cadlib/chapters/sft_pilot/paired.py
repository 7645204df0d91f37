"""Same cases, paired: chapter 7's rates with Wilson intervals and its paired comparisons.

Every system of chapter 7 is scored on the same held-out cases, so two systems are compared
case by case (issue 20) with the tests of :mod:`cadlib.metrics`: a binary outcome (EM, span-only
EM, parse, identity, tests passed) by McNemar's exact test, a per-case number (span IoU) by a
paired bootstrap of the mean difference. All p-values of the chapter are Holm-adjusted together
before anything is called significant, at :data:`cadlib.metrics.ALPHA`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from cadlib.metrics import ALPHA, format_p, holm, mcnemar_exact, paired_bootstrap, wilson_ci

from .scoring import CaseResult

__all__ = [
    "BINARY_METRICS",
    "check_paired",
    "compare",
    "comparison_table",
    "rates_table",
]

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


def check_paired(a: Sequence[CaseResult], b: Sequence[CaseResult]) -> None:
    """Fail unless ``a`` and ``b`` hold the same cases in the same order."""
    ids_a, ids_b = [r.id for r in a], [r.id for r in b]
    if ids_a != ids_b:
        raise ValueError(
            f"not paired: {len(ids_a)} vs {len(ids_b)} cases, first difference "
            f"{next(((x, y) for x, y in zip(ids_a, ids_b, strict=False) if x != y), None)}"
        )


def _values(results: Sequence[CaseResult], metric: str) -> list:
    if metric == "passed":
        return [bool(r.passed) for r in results]
    return [getattr(r, metric) for r in results]


def _free_form(results: Sequence[CaseResult]) -> bool:
    return bool(results) and all(r.extra.get("free_form") for r in results)


def compare(
    systems: Mapping[str, Sequence[CaseResult]],
    pairs: Sequence[tuple[str, str]],
    metrics: Sequence[str] = ("em", "span_em", "span_iou", "identity", "passed"),
) -> list[dict]:
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
        rows.append(
            {
                "A": c["system_a"],
                "B": c["system_b"],
                "metric": name,
                "A vs B": values,
                "discordant / 95% CI": detail,
                "test": c["test"],
                "p": format_p(c["p"], c["test"]),
                "p (Holm)": format_p(c["p_holm"], c["test"]),
                f"significant at {ALPHA}": "yes" if c["significant"] else "no",
            }
        )
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
