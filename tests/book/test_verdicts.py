"""Verdicts are computed from ours / paper / n under a tolerance declared in code."""

import dataclasses
import inspect

import pytest

from cadlib.book import summary as S
from cadlib.book import verdicts as V


def test_exact_agrees_within_printed_precision_and_contradicts_beyond():
    tol = V.exact(0.05)
    assert V.judge(tol, 74.13, 74.1).verdict == V.EXACT
    assert V.judge(tol, 74.2, 74.1).verdict == V.CONTRADICTS
    assert V.judge(V.exact(), 482, 482).verdict == V.EXACT
    assert V.judge(V.exact(), 481, 482).verdict == V.CONTRADICTS


def test_noise_is_a_two_proportion_z_test_and_shows_its_standard_error():
    tol = V.noise(n_paper=820, reason="seeded noise")
    near = V.judge(tol, 23.9, 24.76, n=820)
    assert near.verdict == V.WITHIN_NOISE and "SE" in near.detail and "z =" in near.detail
    assert V.judge(tol, 15.0, 24.76, n=820).verdict == V.CONTRADICTS
    # our own (e.g. case-clustered) standard error is used when given
    assert V.judge(tol, 15.0, 24.76, se=20.0).verdict == V.WITHIN_NOISE
    with pytest.raises(ValueError):
        V.judge(tol, 15.0, 24.76)


def test_kinds_that_are_not_evidence_never_agree_or_contradict():
    for tol in (V.by_construction("FSM"), V.not_comparable("CPU")):
        for ours in (1.0, 1e6):
            assert V.judge(tol, ours, 1.0).verdict == tol.kind
    for ours in (1.0, 1e6):
        assert V.judge(V.derived("paper's curve"), ours, 1.0).verdict not in V.EVIDENCE
    nr = V.not_run_here("needs a GPU", "papermill ... -p profile paper")
    assert (
        V.judge(nr, None, 1.0).verdict == V.NOT_RUN_HERE
        and "papermill" in V.judge(nr, None, 1.0).detail
    )
    assert V.judge(V.exact(), None, 1.0).verdict == V.NOT_YET_RUN
    assert V.judge(V.beyond(), 3.0, None).verdict == V.BEYOND


def test_a_declaration_needs_its_reason_and_cannot_name_an_outcome():
    with pytest.raises(ValueError):
        V.Tolerance("reproduced", "because")
    with pytest.raises(ValueError):
        V.not_comparable("")
    fields = {f.name for f in dataclasses.fields(V.Tolerance)}
    assert not fields & {"verdict", "status", "why", "outcome"}
    assert "verdict" not in inspect.signature(S.Headline).parameters


@pytest.mark.parametrize(
    "h",
    [h for h in S.all_headlines() if h.tolerance.kind in ("exact", "noise")],
    ids=lambda h: h.label,
)
def test_evidence_verdicts_follow_the_data_not_the_declaration(h):
    """Moving our value far from the paper's turns every evidence figure into a contradiction:
    no headline can carry a pre-written agreement."""
    noisy = h.tolerance.kind == "noise"
    far = (h.paper + 50) % 100 if noisy else (h.paper or 1.0) * 3 + 50
    n = 10**6 if noisy else None
    assert V.judge(h.tolerance, far, h.paper, n=n).verdict == V.CONTRADICTS
    assert V.judge(h.tolerance, h.paper, h.paper, n=n).verdict in (V.EXACT, V.WITHIN_NOISE)


def test_every_headline_declares_a_reason_unless_it_is_a_plain_recount():
    for h in S.all_headlines():
        if h.tolerance.kind not in ("exact", V.BEYOND):
            assert h.tolerance.reason, h.label


def test_count_line_puts_evidence_first():
    line = V.count_line([V.EXACT, V.EXACT, V.BY_CONSTRUCTION, V.CONTRADICTS])
    assert line.startswith("**2** exact, **1** contradicts the paper, **1** by construction")
    assert "of 4 figures; 3 count as evidence" in line


def test_a_consistency_check_of_the_papers_numbers_can_fail():
    """A figure derived from the paper's own numbers is consistent within its rtol; beyond it
    the verdict says the paper disagrees with itself, with the factor (never evidence)."""
    tol = V.derived("paper's curve", rtol=0.05)
    assert V.judge(tol, 3.441, 3.45).verdict == V.DERIVED
    off = V.judge(tol, 2.23, 0.15)
    assert off.verdict == V.PAPER_DISAGREES and "15×" in off.detail
    assert V.judge(tol, 1.3 * 3.4, 3.4).verdict == V.PAPER_DISAGREES
    assert V.PAPER_DISAGREES in V.VERDICTS and V.PAPER_DISAGREES not in V.EVIDENCE


def test_count_line_lists_the_papers_inconsistencies_and_does_not_count_them():
    line = V.count_line([V.EXACT, V.PAPER_DISAGREES, V.DERIVED])
    assert "**1** the paper's numbers disagree with each other" in line
    assert "of 3 figures; 1 count as evidence" in line
    assert line.index(V.DERIVED) < line.index(V.PAPER_DISAGREES)


def test_declarations_do_not_claim_to_precede_the_results():
    """The tolerances were written with the results known: no text says 'before'."""
    from pathlib import Path

    import cadlib

    root = Path(cadlib.__file__).parent / "book"
    for path in (root / "verdicts.py", *sorted((root / "summary").glob("*.py"))):
        text = path.read_text()
        assert "declared before" not in text and "before it is made" not in text, path
        assert "proved by property" not in text and "proved with property" not in text, path
