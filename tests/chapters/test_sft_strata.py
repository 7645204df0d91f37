"""Chapter 7's strata: one-line documents leave no span to choose, so a pooled "learned to
select spans" is split by the document's code lines, with and without identity outputs."""

import pytest

from cadlib.chapters import sft_pilot as sft

TRAINED, UNTRAINED = "SFT+FSM, Py-only", "FSM-constrained (untrained)"


def _rec(system, case, span_em, identity=False, closed=False):
    return {
        "system": system,
        "id": case,
        "span_em": span_em,
        "span_iou": 1.0 * span_em,
        "identity": identity,
        "budget_closed": closed,
        "free_form": False,
    }


DOCS = {
    **{f"one/{k}": "    return x + 1\n" for k in range(4)},
    **{f"many/{k}": "def f(x):\n    y = x\n\n    return y\n" for k in range(6)},
}


def _records(multi_hits: int):
    recs = []
    for case in DOCS:
        one = case.startswith("one")
        hit = one or int(case.split("/")[1]) < multi_hits
        recs.append(_rec(TRAINED, case, hit, identity=one))
        recs.append(_rec(UNTRAINED, case, False, closed=True))
    return recs


def test_code_lines_and_strata():
    assert (
        sft.run.code_lines("    return x\n") == 1
        and sft.run.stratum("    return x\n") == sft.run.ONE_LINE
    )
    assert (
        sft.run.code_lines("a\n\nb\n") == 2 and sft.run.stratum("a\n\nb\n") == sft.run.SEVERAL_LINES
    )


def test_one_line_hits_are_not_read_as_span_selection():
    md = sft.text.strata_markdown(
        _records(0), DOCS, trained=TRAINED, untrained=UNTRAINED, label="toy"
    )
    assert md.index("0/6 (0/6 without identity") < md.index("4/4 (4 identity outputs)")
    assert "learned the format and to stop" in md
    assert "no evidence that it selects spans in multi-line functions" in md
    table = sft.show.strata_table(_records(0), DOCS).set_index(["system", "stratum"])
    assert table.loc[(TRAINED, sft.run.ONE_LINE), "span-only EM"] == "4/4"
    assert table.loc[(TRAINED, sft.run.ONE_LINE), "span-only EM, non-identity"] == "0/0"
    assert table.loc[(UNTRAINED, sft.run.SEVERAL_LINES), "budget closed"] == 6


def test_multi_line_evidence_is_claimed_only_when_the_paired_test_says_so():
    md = sft.text.strata_markdown(_records(6), DOCS, trained=TRAINED, untrained=UNTRAINED)
    assert "selects spans in multi-line functions" in md and "no evidence" not in md


def test_missing_documents_fail_loudly():
    with pytest.raises(ValueError, match="no document"):
        sft.show.strata_table(_records(0), {})


def test_the_untested_span_selection_gap_is_no_longer_claimed():
    class A:
        def __init__(self, em):
            self.em, self.parsed = em, True

    comps = [
        {
            "system_a": "t",
            "system_b": "u",
            "metric": m,
            "a": 1,
            "b": 0,
            "n": 2,
            "significant": False,
            "p": 1.0,
            "p_holm": 1.0,
            "ci": (0.0, 0.5),
            "test": "",
        }
        for m in ("span_em", "span_iou", "identity", "em")
    ]
    text = sft.text.conclusion(
        {"loc": [A(True), A(False)]},
        comps,
        trained="t",
        untrained="u",
        localized="loc",
        strata="*By stratum:* toy",
    )
    assert "remaining gap to full EM is span selection" not in text
    assert "not tested here" in text and "*By stratum:* toy" in text
    # with strata, they lead and the declared test follows, labelled pooled, without a verdict
    assert text.index("*By stratum:* toy") < text.index("Pooled over all documents")
    assert "**No**" not in text and "**Yes**" not in text
    yes = [{**c, "significant": True} for c in comps]
    text = sft.text.conclusion(
        {"loc": [A(True), A(False)]},
        yes,
        trained="t",
        untrained="u",
        localized="loc",
        strata="*By stratum:* toy",
    )
    assert "**Yes**" not in text and "Pooled over all documents" in text


def test_the_full_runs_conclusion_is_regenerated_with_its_strata():
    text = sft.text.regenerated_conclusion("full")
    if text is None:
        pytest.skip("no full run committed")
    assert "*By stratum (profile full):*" in text
    assert "remaining gap to full EM is span selection" not in text


def _numbers(pooled_significant: bool) -> dict:
    """Table 6 and the declared pooled test of :func:`_records`' two systems."""
    t6 = {
        TRAINED: {"n": 10, "em": 0, "identity": 4},
        UNTRAINED: {"n": 10, "em": 0, "identity": 0},
    }
    span = {"system_a": TRAINED, "system_b": UNTRAINED, "metric": "span_em", "a": 4, "b": 0}
    span.update(n=10, p=0.0625, p_holm=0.01 if pooled_significant else 0.2)
    return {"table6": t6, "comparisons": [{**span, "significant": pooled_significant}]}


def test_a_pooled_pass_that_fails_on_multi_line_documents_is_no():
    text = sft.text.answer(_numbers(True), _records(0), DOCS)
    assert text.startswith("**No** on multi-line documents: there span-only EM is 0/6")
    assert "Yes" not in text and "carried by the one-line documents" in text
    assert text.index("0/6") < text.index("4/4") < text.index("4/10")  # multi-line first


def test_the_answer_says_yes_only_when_the_multi_line_stratum_does_too():
    text = sft.text.answer(_numbers(True), _records(6), DOCS)
    assert text.startswith("**Yes**, on multi-line documents too") and "carried" not in text
    assert sft.text.answer(_numbers(False), _records(6), DOCS).startswith(
        "**Not by the declared test**"
    )
    one_line_only = {k: v for k, v in DOCS.items() if k.startswith("one")}
    records = [r for r in _records(0) if r["id"] in one_line_only]
    assert sft.text.answer(_numbers(True), records, one_line_only).startswith("**Not tested**")
