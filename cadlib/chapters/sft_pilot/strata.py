"""Chapter 7's span-selection results by stratum: documents of one code line vs several.

A held-out document of a single code line leaves a program no span to choose: besides the
identity program, the only program that edits it rewrites that line and copies the rest (a
``<gen>`` body, then a copy of what follows), so span-only EM there says the model learned the
format and to stop, not that it selects spans. Pooled over both kinds, those cases can carry a
"learned to select spans" verdict on their own. This module splits the per-case records
(``results/sft_pilot*.cases.jsonl``, :mod:`cadlib.chapters.sft_pilot.report`) by the document's
number of code lines, counts span-only EM with and without identity outputs (the input returned
unchanged, which also scores span-only EM where the fix is a single line's), and pairs the
trained and untrained FSM systems on the multi-line stratum with McNemar's exact test, so
the chapter's reading of the strata is generated from the records, never typed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from cadlib.metrics import ALPHA, format_p, mcnemar_exact
from cadlib.resolver import doc_lines

__all__ = ["ONE_LINE", "SEVERAL_LINES", "code_lines", "stratum", "strata_table", "strata_markdown"]

ONE_LINE, SEVERAL_LINES = "one code line", "several code lines"


def code_lines(doc: str) -> int:
    """Non-blank lines of ``doc`` (:func:`cadlib.resolver.doc_lines`)."""
    return sum(1 for line in doc_lines(doc) if line.strip())


def stratum(doc: str) -> str:
    """:data:`ONE_LINE` for a document of a single code line, else :data:`SEVERAL_LINES`."""
    return ONE_LINE if code_lines(doc) == 1 else SEVERAL_LINES


def _frame(records: Sequence[Mapping], docs: Mapping[str, str]) -> pd.DataFrame:
    """The program records (free-form replies have no spans) with their document's stratum."""
    rows = [r for r in records if not r.get("free_form") and r.get("span_em") is not None]
    missing = sorted({r["id"] for r in rows} - set(docs))
    if missing:
        raise ValueError(f"no document for case ids {missing[:3]}: pass the corpus' documents")
    frame = pd.DataFrame(rows)
    return frame.assign(stratum=[stratum(docs[i]) for i in frame["id"]])


def strata_table(records: Sequence[Mapping], docs: Mapping[str, str]) -> pd.DataFrame:
    """Per program system and stratum: cases, span-only EM, identity outputs, span-only EM
    without them (of the non-identity attempts), mean span IoU, and runs the budget closed."""
    frame = _frame(records, docs)
    out = []
    for (system, part), g in frame.groupby(["system", "stratum"], sort=False):
        kept = g[~g.identity.astype(bool)]
        out.append(
            {
                "system": system,
                "stratum": part,
                "cases": len(g),
                "span-only EM": f"{int(g.span_em.sum())}/{len(g)}",
                "identity outputs": int(g.identity.sum()),
                "span-only EM, non-identity": f"{int(kept.span_em.sum())}/{len(kept)}",
                "mean span IoU": round(float(g.span_iou.astype(float).mean()), 3),
                "budget closed": int(g.budget_closed.fillna(False).astype(bool).sum()),
            }
        )
    return pd.DataFrame(out)


def strata_markdown(
    records: Sequence[Mapping],
    docs: Mapping[str, str],
    *,
    trained: str,
    untrained: str,
    label: str = "",
) -> str:
    """What the strata show, as Markdown generated from the records: span-only EM of
    ``trained`` and ``untrained`` per stratum (and ``trained``'s without identity outputs),
    how many runs of each the decision budget closed, and McNemar's exact test of span-only EM
    on the multi-line stratum (unadjusted, at :data:`cadlib.metrics.ALPHA`):
    "evidence" of span selection on multi-line documents is claimed only when that test says so."""
    frame = _frame(records, docs)
    a, b = (frame[frame.system == s].set_index("id") for s in (trained, untrained))
    if a.empty or b.empty:
        raise ValueError(f"the records lack {trained!r} or {untrained!r}")
    b = b.reindex(a.index)

    def em(g, part):
        g = g[g.stratum == part]
        return int(g.span_em.sum()), len(g)

    (a1, n1), (a2, n2) = em(a, ONE_LINE), em(a, SEVERAL_LINES)
    (b1, _), (b2, _) = em(b, ONE_LINE), em(b, SEVERAL_LINES)
    multi = a.stratum == SEVERAL_LINES
    kept = a[multi & ~a.identity.astype(bool)]
    test = mcnemar_exact(list(a[multi].span_em.astype(bool)), list(b[multi].span_em.astype(bool)))
    closed_a = int(a.budget_closed.fillna(False).astype(bool).sum())
    closed_b = int(b.budget_closed.fillna(False).astype(bool).sum())
    one_id = int(a[a.stratum == ONE_LINE].identity.astype(bool).sum())
    evidence = test["p"] <= ALPHA and a2 > b2
    reading = []
    if closed_a < closed_b:
        reading.append("learned the format and to stop")
    if n1 and a1 > b1:
        reading.append(
            "gets the program right on one-line functions, where no span is left to choose"
        )
    reading.append(
        "selects spans in multi-line functions"
        if evidence
        else "no evidence that it selects spans in multi-line functions"
    )
    head = f"*By stratum ({label}):*" if label else "*By stratum:*"
    return (
        f"{head} of the {len(a)} held-out documents, {n1} have {ONE_LINE}: there the only "
        f"program besides the identity rewrites that line and copies the rest, so span-only "
        f"EM needs no choice of span. {trained} scores span-only EM on {a1}/{n1} of them "
        f"({one_id} identity outputs) against {b1}/{n1} untrained; on the {n2} documents of "
        f"{SEVERAL_LINES}, {a2}/{n2} ({int(kept.span_em.sum())}/{len(kept)} without identity "
        f"outputs) against {b2}/{n2} untrained (McNemar exact p = {format_p(test['p'])}, "
        f"unadjusted). The decision budget closed {closed_a}/{len(a)} trained runs and "
        f"{closed_b}/{len(b)} untrained ones. Read together: the trained model "
        + "; ".join(reading)
        + "."
    )
