"""The three findings' declared per-case tests (cadlib.chapters.sft_pilot.run_paired) and their
answers (cadlib.chapters.sft_pilot.text)."""

import pytest

from cadlib.chapters import sft_pilot as sft
from cadlib.metrics import holm

PY, COMBINED = sft.run_pilot.sft_system("py"), sft.run_pilot.sft_system("combined")


def record(system, case, seed=0, em=False, span_em=False, start=1, end=1, n=2, identity=False):
    return dict(
        system=system,
        id=f"Python/{case}",
        seed=seed,
        em=em,
        span_em=span_em,
        start_hits=start,
        end_hits=end,
        n_oracle_copies=n,
        identity=identity,
        parsed=True,
    )


def pilot(n_cases=20, py_span=12, combined_em=15, py_em=3, end_hits=0):
    """Untrained: never span-right; Py-only: span-right on the first py_span cases (every
    seed); EM on the first py_em / combined_em cases; every trained attempt's start right and
    end_hits of 2 ends right."""
    rows = []
    for c in range(n_cases):
        rows.append(record(sft.run_pilot.FSM_UNTRAINED, c))
        for seed in (0, 1, 2):
            rows.append(
                record(PY, c, seed, em=c < py_em, span_em=c < py_span, start=2, end=end_hits)
            )
            rows.append(record(COMBINED, c, seed, em=c < combined_em, start=2, end=end_hits))
    return rows


def test_case_means_average_seeds_and_skip_what_a_value_leaves_out():
    rows = [record(PY, 1, 0, em=True), record(PY, 1, 1), record(PY, 2, 0, identity=True)]
    assert sft.run_paired.case_means(rows, PY, lambda r: r["em"]) == {
        "Python/1": 0.5,
        "Python/2": 0.0,
    }
    gap = sft.run_paired.case_means(rows, PY, sft.run_paired._endpoint_gap)
    assert gap == {"Python/1": 0.0}  # the identity output is left out


def test_each_finding_holds_when_the_data_says_so_and_fails_when_not():
    out = sft.run_paired.pilot_findings(pilot(), ("py", "combined"))
    assert all(out[k]["holds"] for k in sft.run_paired.DECLARED)
    assert out["learnable"]["n"] == 20 and out["learnable"]["diff"] == pytest.approx(0.6)
    assert out["combined helps"]["diff"] == pytest.approx(0.6)
    assert out["end harder"]["diff"] == pytest.approx(1.0)
    null = sft.run_paired.pilot_findings(
        pilot(py_span=0, combined_em=3, end_hits=2), ("py", "combined")
    )
    assert not any(null[k]["holds"] for k in sft.run_paired.DECLARED)
    assert null["combined helps"]["p"] == 1.0  # no case differs
    worse = sft.run_paired.pilot_findings(pilot(combined_em=0, py_em=15), ("py", "combined"))
    assert worse["combined helps"]["p"] < 0.05 and not worse["combined helps"]["holds"]
    assert "*combined helps*: **No**, significant the other way" in sft.text.findings_markdown(
        worse
    )
    assert "*learnable*: **No**, not significant" in sft.text.findings_markdown(null)
    assert "*learnable*: **Yes**" in sft.text.findings_markdown(out)


def test_a_pooled_learnable_yes_that_the_multi_line_stratum_denies_says_no_first():
    out = sft.run_paired.pilot_findings(pilot(), ("py", "combined"))
    multi = {"n": 26, "a": 2, "b": 0, "evidence": False}
    text = sft.text.findings_markdown(out, multi)
    assert "*learnable*: **No** on multi-line documents (2/26 against 0/26); **Yes** pooled" in text
    assert "*learnable*: **Yes**;" in sft.text.findings_markdown(out, {**multi, "evidence": True})
    null = sft.run_paired.pilot_findings(pilot(py_span=0), ("py", "combined"))
    assert "*learnable*: **No**, not significant" in sft.text.findings_markdown(null, multi)


def test_the_p_values_are_adjusted_together_and_one_set_leaves_combined_untested():
    out = sft.run_paired.pilot_findings(pilot(n_cases=8, py_span=3), ("py",))
    assert "combined helps" not in out
    ps = [out[k]["p"] for k in out]
    assert [out[k]["p_holm"] for k in out] == holm(ps)
    text = sft.text.findings_markdown(out)
    assert "*combined helps*: not tested" in text and text.count("\n") == 2
    assert "Holm" in text and "over 8 cases" in text


def test_a_test_needs_cases_both_systems_scored():
    with pytest.raises(ValueError, match="no case"):
        sft.run_paired.paired_case_test({"a": 1.0}, {"b": 0.0})


def test_the_chapter_section_states_the_tests_before_the_answers():
    text = sft.text.findings_section(pilot(n_cases=8, py_span=3), ("py",))
    assert text.index(sft.run_paired.DECLARED["end harder"]) < text.index("Answers on this run")
