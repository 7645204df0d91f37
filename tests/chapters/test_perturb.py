"""Chapter 5 (notebooks/05_perturbation): Table 8 from the endpoint-noise trials, its tables."""

import json

import pandas as pd
import pytest
from test_endpoint_noise import synthetic_cases

from cadlib import corpora
from cadlib import endpoint_noise as N
from cadlib.chapters import perturbation as P
from cadlib.corpora import load_corpus

# ----- trials on a synthetic corpus ----------------------------------------------------------


def test_zero_noise_gives_full_em_and_no_rejections():
    summary = P.run.perturbation_em(synthetic_cases(), [0], trials=3, which=N.WHICH, progress=False)
    assert (summary.em_trimmed == 1).all() and (summary.em_exact == 1).all()
    assert (summary.strict_rejected == 0).all() and (summary.out_of_range == 0).all()
    assert list(summary.which) == list(N.WHICH) and (summary.runs == 36).all()


def test_pooled_row_weights_every_case_equally():
    cases = synthetic_cases()
    a = N.perturbation_trials(cases[:4], [1], 5, corpus="a", progress=False)
    b = N.perturbation_trials(cases[4:], [1], 5, corpus="b", progress=False)
    summary = P.run.summarize_trials(pd.concat([a, b], ignore_index=True)).set_index("corpus")
    expected = (4 * summary.em_trimmed["a"] + 8 * summary.em_trimmed["b"]) / 12
    assert summary.em_trimmed["pooled"] == pytest.approx(expected)
    assert summary.cases["pooled"] == 12 and summary.runs["pooled"] == 60


def test_humanevalfix_at_zero_noise_is_exact(humanevalpack_dir, monkeypatch):
    monkeypatch.setattr(corpora, "_hub_reachable", lambda: False)
    for name in ("heval-fix-py", "heval-fix-js"):
        cases = load_corpus(name, local_dir=humanevalpack_dir)
        summary = P.run.perturbation_em(cases, [0], trials=1, progress=False)
        assert summary.em_exact.iloc[0] == 1.0 and summary.cases.iloc[0] == 164


# --- the chapter's tables and results (notebooks/05_perturbation) -----------------------------


def _chapter_run():
    cases = synthetic_cases()
    corpora_ = {"heval-fix-py": cases[:6], "heval-fix-js": cases[6:]}
    names = [*corpora_, "pooled"]
    runs = P.run.corpus_trials(corpora_, [0, 1, 2], 3, seed=0, which=N.WHICH)
    summary = P.run.summarize_trials(runs, pool=list(corpora_))
    return corpora_, names, runs, summary


def test_corpus_trials_tags_each_corpus_and_matches_one_run_per_corpus():
    corpora_, _, runs, _ = _chapter_run()
    assert list(dict.fromkeys(runs.corpus)) == list(corpora_)
    one = N.perturbation_trials(
        corpora_["heval-fix-js"], [0, 1, 2], 3, 0, N.WHICH, corpus="heval-fix-js", progress=False
    )
    pd.testing.assert_frame_equal(runs[runs.corpus == "heval-fix-js"].reset_index(drop=True), one)


def test_chapter_tables_have_a_row_per_corpus_and_the_papers_beside_ours():
    corpora_, names, _, summary = _chapter_run()
    both = summary[summary.which == "both"]
    t8 = P.show.table8_table(both, names, [0, 1, 2])
    assert list(t8.columns) == ["eps=0", "eps=1", "eps=2"]
    assert ("HEvalFix-Py", "ours") in t8.index and ("Pooled", "paper") in t8.index
    assert t8.loc[("HEvalFix-Py", "ours"), "eps=0"] == "100.00% ± 0.0"
    assert set(P.show.paper_difference_se(both, names, [0, 1, 2]).columns) <= {"eps=1", "eps=2"}
    assert len(P.show.endpoint_table(summary, names)) == len(names) * len(N.WHICH)
    unclamped = P.run.corpus_trials(corpora_, [1], 3, seed=0, clamp=False)
    t4 = P.run.table4_table(both, P.run.summarize_trials(unclamped, pool=list(corpora_)), names)
    assert len(t4) == 3 * len(names)
    assert (t4.xs("oracle programs (eps=0)")["clipped EM (byte-exact)"] == 1).all()
    swapped = P.run.summarize_trials(
        P.run.corpus_trials(corpora_, [1, 2], 3, 0, swap_inverted=True), pool=list(corpora_)
    )
    sw = P.show.swap_table(both, swapped, names, [0, 1, 2])
    assert list(sw.columns) == ["kept", "swapped", "paper"] and len(sw) == 2 * len(names)


def test_chapter_numbers_are_plain_json_rounded_to_six_places():
    corpora_, names, _, summary = _chapter_run()
    both = summary[summary.which == "both"]
    t4 = P.run.table4_table(both, both, names)
    numbers = P.run.numbers(summary, t4, both, {"py": {}}, {"x": "missing"}, N.WHICH)
    json.dumps(numbers)  # plain Python types only: a numpy scalar would raise here
    assert list(numbers) == [
        "corpora_unavailable",
        "table8",
        "by_endpoint",
        "table4",
        "swap_inverted",
        "endpoint_anchors",
    ]
    cell = numbers["table8"]["pooled"][1]
    assert cell["runs"] == 3 * 12 and all(v == round(v, 6) for v in cell.values())
    assert list(numbers["by_endpoint"]) == list(N.WHICH)


def test_noise_demo_and_corpora_report_say_what_ran():
    case = synthetic_cases()[0]
    text = P.show.noise_demo(case, seed=0, eps_max=1, trials=2)
    assert text.startswith(f"{case.id}: ") and text.count("trimmed EM") == 2

    class Named(list):
        source = "local: somewhere"

    report = P.show.corpora_report({"syn": Named(synthetic_cases(3))}, {"gone": "no data"})
    assert report.splitlines() == [
        "            syn:   3 cases from local",
        "           gone: NOT AVAILABLE (no data)",
    ]
