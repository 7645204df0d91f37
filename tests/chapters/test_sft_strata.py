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
    assert "4/4 of them (4 identity outputs)" in md and "0/6 (0/6 without identity" in md
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
    # a pooled No is not qualified with "though": the strata repeat the comparison
    assert "**No**" in text and "though" not in text and "strata below show" in text
    yes = [{**c, "significant": True} for c in comps]
    text = sft.text.conclusion(
        {"loc": [A(True), A(False)]},
        yes,
        trained="t",
        untrained="u",
        localized="loc",
        strata="*By stratum:* toy",
    )
    assert "**Yes**" in text and "pooled over all documents" in text


def test_the_full_runs_conclusion_is_regenerated_with_its_strata():
    text = sft.text.regenerated_conclusion("full")
    if text is None:
        pytest.skip("no full run committed")
    assert "*By stratum (profile full):*" in text
    assert "remaining gap to full EM is span selection" not in text
