"""The pilot's three findings (paper §5, Table 6), each answered by a test declared before the
multi-seed runs were made (issue 35).

The paper reads three findings off Table 6: the selector is learnable at small scale; pooling
Py + JS + ProbeEdit (Combined) helps weakly (+5.1 pp, p = 0.32, an unpaired chi-squared test);
the span end is harder than the span start (op-level accuracy 0.45-0.51 against 0.64-0.66).
Here each is a paired test on the same held-out cases. With several seeds the attempts of one
case are not independent (same document, same gold), so **the unit is the case**: a case's
score is its mean over the attempts of a system (one per seed), and two systems are compared
by the mean per-case difference, with an exact-in-distribution sign-flip permutation test
(``scipy.stats.permutation_test``, paired samples, seeded, two-sided). The three p-values are
Holm-adjusted together at :data:`cadlib.metrics.ALPHA`; a finding holds only
when its adjusted p is below it and the difference points the paper's way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import permutation_test

from cadlib.metrics import ALPHA, format_p, holm

from .pilot import FSM_UNTRAINED, sft_system

__all__ = [
    "DECLARED",
    "N_RESAMPLES",
    "case_means",
    "paired_case_test",
    "pilot_findings",
    "findings_markdown",
]

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


_READ = {
    "learnable": ("span-only EM per case, SFT+FSM Py-only {a:.2f} against untrained {b:.2f}"),
    "combined helps": "EM per case, Combined {a:.2f} against Py-only {b:.2f}",
    "end harder": "start minus end accuracy per case {diff:+.2f}",
}


def findings_markdown(results: Mapping[str, dict]) -> str:
    """One line per finding of :func:`pilot_findings`: **Yes** / **No**, the per-case means, n
    and the adjusted p; the finding not tested (one training set) is said to be so."""
    lines = []
    for name in DECLARED:
        t = results.get(name)
        if t is None:
            lines.append(f"- *{name}*: not tested (this run trains one training set).")
            continue
        answer = (
            "**Yes**"
            if t["holds"]
            else "**No**, significant the other way"
            if t["p_holm"] < ALPHA
            else "**No**, not significant"
        )
        lines.append(
            f"- *{name}*: {answer}; {_READ[name].format(**t)} over {t['n']} cases "
            f"(sign-flip p = {format_p(t['p'])}, Holm {format_p(t['p_holm'])}, "
            f"at {ALPHA})."
        )
    return "\n".join(lines)
