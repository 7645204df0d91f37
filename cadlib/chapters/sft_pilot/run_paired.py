"""Same cases, paired: chapter 7's rates with Wilson intervals, its paired comparisons, and the
three findings' declared tests.

Every system of chapter 7 is scored on the same held-out cases, so two systems are compared
case by case (issue 20) with the tests of :mod:`cadlib.metrics`: a binary outcome (EM, span-only
EM, parse, identity, tests passed) by McNemar's exact test, a per-case number (span IoU) by a
paired bootstrap of the mean difference. All p-values of the chapter are Holm-adjusted together
before anything is called significant, at :data:`cadlib.metrics.ALPHA`.

The pilot's three findings (paper §5, Table 6) are each answered by a test declared before the
multi-seed runs were made (issue 35). The paper reads them off Table 6: the selector is
learnable at small scale; pooling Py + JS + ProbeEdit (Combined) helps weakly (+5.1 pp,
p = 0.32, an unpaired chi-squared test); the span end is harder than the span start (op-level
accuracy 0.45-0.51 against 0.64-0.66). Here each is a paired test on the same held-out cases.
With several seeds the attempts of one case are not independent (same document, same gold), so
**the unit is the case**: a case's score is its mean over the attempts of a system (one per
seed), and two systems are compared by the mean per-case difference, with an
exact-in-distribution sign-flip permutation test (``scipy.stats.permutation_test``, paired
samples, seeded, two-sided). The three p-values are Holm-adjusted together at
:data:`cadlib.metrics.ALPHA`; a finding holds only when its adjusted p is below it and the
difference points the paper's way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import permutation_test

from cadlib.metrics import ALPHA, holm, mcnemar_exact, paired_bootstrap, wilson_ci

from .run_pilot import CRP, FSM_UNTRAINED, REGEN, Pilot, sft_system
from .run_scoring import CaseResult

__all__ = [
    "BINARY_METRICS",
    "DECLARED",
    "N_RESAMPLES",
    "case_means",
    "chapter_pairs",
    "check_paired",
    "compare",
    "paired_case_test",
    "paired_comparisons",
    "pilot_findings",
    "program_systems",
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


def chapter_pairs(P: Mapping) -> list[tuple[str, str]]:
    """The chapter's paired comparisons: trained vs each untrained system (the question
    first), then grammar enforcement alone (untrained FSM vs prompt-level CRP)."""
    trained = sft_system(P["train_sets"][0])
    return [(trained, FSM_UNTRAINED), (trained, CRP), (trained, REGEN), (FSM_UNTRAINED, CRP)]


def paired_comparisons(baselines: Mapping, pilot: Pilot, P: Mapping) -> list[dict]:
    """The paired tests of :func:`chapter_pairs`, with one attempt per case: the first
    seed's run where several seeds were trained."""
    paired = {**baselines, **pilot.systems(seed=P["seeds"][0])}
    return compare(paired, chapter_pairs(P))


def program_systems(ours: Mapping[str, Sequence[CaseResult]]) -> dict:
    """The systems that emit programs (Table 7's rows): no localized edit, no free-form."""
    return {
        k: v
        for k, v in ours.items()
        if "localized" not in k and not all(r.extra.get("free_form") for r in v)
    }


#: The three tests as declared before the runs (shown in the chapter above their results).
DECLARED = {
    "learnable": "Is the selector learnable? Span-only EM (every op and copy range equal to the "
    "oracle's) of SFT+FSM, Py-only against the untrained FSM-constrained model, per held-out "
    "case averaged over seeds; yes when SFT is higher.",
    "combined helps": "Does Combined help? Final-output EM of SFT+FSM, Combined against "
    "SFT+FSM, Py-only, per held-out case averaged over seeds; yes when Combined is higher.",
    "end harder": "Is the span end harder than the start? Per held-out case, op-level "
    "span-start accuracy minus span-end accuracy over the trained models' attempts whose "
    "output is not the input returned unchanged (an identity output gets the first start and "
    "the last end right by construction); yes when the start is more accurate.",
}


#: Random sign flips per test (seeded): the p-value's Monte Carlo error is below 0.002.
N_RESAMPLES = 100_000


def case_means(records: Sequence[Mapping], system: str, value) -> dict[str, float]:
    """``{case id: mean of value(record)}`` over ``system``'s records (one per seed); a
    record for which ``value`` returns ``None`` is left out, a case with none is absent."""
    sums: dict[str, list[float]] = {}
    for r in records:
        if r["system"] != system:
            continue
        v = value(r)
        if v is not None:
            sums.setdefault(r["id"], []).append(float(v))
    return {k: float(np.mean(v)) for k, v in sums.items()}


def paired_case_test(a: Mapping[str, float], b: Mapping[str, float], seed: int = 0) -> dict:
    """Mean of ``a[c] - b[c]`` over the cases both hold, and the two-sided sign-flip p of it
    being zero: ``{n, a, b, diff, p}`` (``p`` 1.0 when every difference is zero)."""
    cases = sorted(set(a) & set(b))
    x = np.array([a[c] for c in cases])
    y = np.array([b[c] for c in cases])
    if not cases:
        raise ValueError("no case is scored by both systems")
    d = x - y
    if not d.any():
        p = 1.0
    else:
        res = permutation_test(
            (x, y),
            lambda u, v, axis: np.mean(u - v, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=N_RESAMPLES,
            alternative="two-sided",
            random_state=seed,
        )
        p = float(res.pvalue)
    return {
        "n": len(cases),
        "a": float(x.mean()),
        "b": float(y.mean()),
        "diff": float(d.mean()),
        "p": p,
    }


def _endpoint_gap(r: Mapping):
    """Start minus end accuracy of one attempt's ops; None for an identity output, a parse
    failure or a case without oracle copies."""
    n = r.get("n_oracle_copies") or 0
    if r.get("identity") or not r.get("parsed") or n == 0:
        return None
    return (r["start_hits"] - r["end_hits"]) / n


def pilot_findings(records: Sequence[Mapping], train_sets: Sequence[str]) -> dict:
    """Each declared test (:data:`DECLARED`) that ``records`` (per-attempt case records)
    allow, with Holm-adjusted p and ``holds``; "combined helps" needs both training sets."""
    py, out = sft_system("py"), {}
    out["learnable"] = paired_case_test(
        case_means(records, py, lambda r: r["span_em"]),
        case_means(records, FSM_UNTRAINED, lambda r: r["span_em"]),
    )
    if {"py", "combined"} <= set(train_sets):
        em = lambda r: r["em"]  # noqa: E731
        out["combined helps"] = paired_case_test(
            case_means(records, sft_system("combined"), em), case_means(records, py, em)
        )
    gaps: dict[str, list[float]] = {}
    for s in train_sets:
        for case, g in case_means(records, sft_system(s), _endpoint_gap).items():
            gaps.setdefault(case, []).append(g)
    gap = {c: float(np.mean(v)) for c, v in gaps.items()}
    out["end harder"] = paired_case_test(gap, dict.fromkeys(gap, 0.0))
    for (name, test), p_holm in zip(out.items(), holm([t["p"] for t in out.values()]), strict=True):
        test.update(
            p_holm=p_holm, holds=bool(p_holm < ALPHA and test["diff"] > 0), declared=DECLARED[name]
        )
    return out
