"""Endpoint noise on oracle programs (paper §3 "Span-selection sensitivity", §5, Table 8)."""

import collections
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib import corpora
from cadlib.chapters.perturbation import noise as P
from cadlib.corpora import EditCase, load_corpus
from cadlib.grammar import Copy, Gen, Program
from cadlib.resolver import RangeClippedWarning, ResolveError, resolve

big = Program([Copy(40, 60), Gen("x"), Copy(100, 150)])  # far from both document edges


def offsets(program, noisy):
    return [
        (b.start - a.start, b.end - a.end)
        for a, b in zip(program.copies, noisy.copies, strict=True)
    ]


def test_zero_noise_leaves_the_program_unchanged():
    rng = np.random.default_rng(0)
    for which in P.WHICH:
        assert P.perturb_program(big, 200, 0, rng, which) == big


def test_offsets_are_uniform_integers_in_the_closed_interval():
    rng = np.random.default_rng(1)
    eps = 3
    counts = collections.Counter()
    for _ in range(2000):
        for d_start, d_end in offsets(big, P.perturb_program(big, 200, eps, rng)):
            counts[d_start] += 1
            counts[d_end] += 1
    assert set(counts) == set(range(-eps, eps + 1))  # both signs, every value, nothing else
    expected = sum(counts.values()) / (2 * eps + 1)
    assert all(abs(c - expected) < 0.1 * expected for c in counts.values())


def test_endpoints_move_independently():
    rng = np.random.default_rng(2)
    pairs = [o for _ in range(500) for o in offsets(big, P.perturb_program(big, 200, 1, rng))]
    assert len(set(pairs)) == 9  # every (d_start, d_end) combination occurs


def test_which_selects_the_noisy_endpoint_with_common_random_numbers():
    both = P.perturb_program(big, 200, 5, np.random.default_rng(3), "both")
    start = P.perturb_program(big, 200, 5, np.random.default_rng(3), "start")
    end = P.perturb_program(big, 200, 5, np.random.default_rng(3), "end")
    for b, s, e, o in zip(both.copies, start.copies, end.copies, big.copies, strict=True):
        assert (s.start, s.end) == (b.start, o.end)
        assert (e.start, e.end) == (o.start, b.end)
    assert offsets(big, both) != [(0, 0), (0, 0)]


programs = st.lists(
    st.tuples(st.integers(1, 12), st.integers(0, 4)).map(lambda t: Copy(t[0], t[0] + t[1])),
    min_size=1,
    max_size=5,
).map(Program)


@settings(max_examples=200)
@given(programs, st.integers(1, 16), st.integers(0, 6), st.sampled_from(P.WHICH), st.integers(0))
def test_clamped_endpoints_lie_in_the_document(program, n_lines, eps, which, seed):
    noisy = P.perturb_program(program, n_lines, eps, np.random.default_rng(seed), which)
    for op in noisy.copies:
        assert 1 <= op.start <= n_lines and 1 <= op.end <= n_lines


@settings(max_examples=200)
@given(programs, st.integers(1, 16), st.integers(0, 6), st.integers(0))
def test_clipped_resolver_on_raw_noise_equals_clamped_noise(program, n_lines, eps, seed):
    doc = "\n".join(f"line {k}" for k in range(1, n_lines + 1))
    raw = P.perturb_program(program, n_lines, eps, np.random.default_rng(seed), clamp=False)
    clamped = P.perturb_program(program, n_lines, eps, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        assert resolve(raw, doc, "clipped") == resolve(clamped, doc, "clipped")


def test_clamping_saturates_at_the_document_edges():
    program = Program([Copy(1, 3)])
    seen = set()
    rng = np.random.default_rng(4)
    for _ in range(300):
        (op,) = P.perturb_program(program, 3, 5, rng).copies
        seen.add((op.start, op.end))
    assert {s for s, _ in seen} == {1, 2, 3} and {e for _, e in seen} == {1, 2, 3}
    assert (3, 1) in seen  # an inverted range is kept, not swapped


def test_inverted_ranges_are_rejected_by_strict_and_copy_nothing_when_clipped():
    doc = "a\nb\nc"
    inverted = Program([Copy(1, 1), Copy(3, 2)])
    with pytest.raises(ResolveError, match="inverted"):
        resolve(inverted, doc, "strict")
    with pytest.warns(RangeClippedWarning):
        assert resolve(inverted, doc, "clipped") == "a\n"  # an empty part, joined by "\n"


def test_swap_inverted_reorders_the_endpoints():
    rng = np.random.default_rng(5)
    for _ in range(200):
        (op,) = P.perturb_program(Program([Copy(2, 2)]), 3, 2, rng, swap_inverted=True).copies
        assert op.start <= op.end


def test_gen_ops_are_untouched():
    program = Program([Gen("head"), Copy(2, 3), Gen("tail")])
    noisy = P.perturb_program(program, 5, 2, np.random.default_rng(6))
    assert noisy.gens == program.gens and len(noisy) == 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(eps_max=-1), "eps_max must be an integer >= 0"),
        (dict(eps_max=1.5), "eps_max must be an integer >= 0"),
        (dict(which="middle"), "unknown which 'middle'"),
        (dict(n_lines=0), "n_lines must be an integer >= 1"),
    ],
)
def test_bad_arguments_fail_with_a_message(kwargs, message):
    args = dict(program=big, n_lines=200, eps_max=1, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ValueError, match=message):
        P.perturb_program(**args)


# ----- trials on a synthetic corpus ----------------------------------------------------------


def synthetic_cases(n=12):
    rng = np.random.default_rng(7)
    cases = []
    for k in range(n):
        lines = [f"stmt_{k}_{i}" for i in range(int(rng.integers(4, 15)))]
        gold = list(lines)
        gold[int(rng.integers(0, len(gold)))] = "changed"
        cases.append(EditCase(f"syn/{k}", "\n".join(lines), "\n".join(gold), "edit"))
    return cases


def test_zero_noise_gives_full_em_and_no_rejections():
    summary = P.perturbation_em(synthetic_cases(), [0], trials=3, which=P.WHICH, progress=False)
    assert (summary.em_trimmed == 1).all() and (summary.em_exact == 1).all()
    assert (summary.strict_rejected == 0).all() and (summary.out_of_range == 0).all()
    assert list(summary.which) == list(P.WHICH) and (summary.runs == 36).all()


def test_same_seed_same_results_and_independent_of_case_order():
    cases = synthetic_cases()
    a = P.perturbation_trials(cases, [1, 3], trials=3, seed=11, which=P.WHICH, progress=False)
    b = P.perturbation_trials(cases, [1, 3], trials=3, seed=11, which=P.WHICH, progress=False)
    pd.testing.assert_frame_equal(a, b)
    c = P.perturbation_trials(cases[::-1], [1, 3], 3, seed=11, which=P.WHICH, progress=False)
    key = ["case", "eps_max", "which", "trial"]
    pd.testing.assert_frame_equal(
        a.sort_values(key, ignore_index=True), c.sort_values(key, ignore_index=True)
    )
    d = P.perturbation_trials(cases, [1, 3], trials=3, seed=12, which=P.WHICH, progress=False)
    assert not a.equals(d)


def test_noise_lowers_em_and_strict_counts_inverted_ranges():
    runs = P.perturbation_trials(synthetic_cases(), [0, 2], trials=5, seed=0, progress=False)
    noisy = runs[runs.eps_max == 2]
    assert noisy.em_trimmed.mean() < 1
    # clamped noise never leaves the document, so strict rejects exactly the inverted ranges
    assert (noisy.strict_rejected == noisy.inverted).all()
    assert (noisy.strict_em_trimmed <= noisy.em_trimmed).all()


def test_pooled_row_weights_every_case_equally():
    cases = synthetic_cases()
    a = P.perturbation_trials(cases[:4], [1], 5, corpus="a", progress=False)
    b = P.perturbation_trials(cases[4:], [1], 5, corpus="b", progress=False)
    summary = P.summarize_trials(pd.concat([a, b], ignore_index=True)).set_index("corpus")
    expected = (4 * summary.em_trimmed["a"] + 8 * summary.em_trimmed["b"]) / 12
    assert summary.em_trimmed["pooled"] == pytest.approx(expected)
    assert summary.cases["pooled"] == 12 and summary.runs["pooled"] == 60


def test_humanevalfix_at_zero_noise_is_exact(humanevalpack_dir, monkeypatch):
    monkeypatch.setattr(corpora, "_hub_reachable", lambda: False)
    for name in ("heval-fix-py", "heval-fix-js"):
        cases = load_corpus(name, local_dir=humanevalpack_dir)
        summary = P.perturbation_em(cases, [0], trials=1, progress=False)
        assert summary.em_exact.iloc[0] == 1.0 and summary.cases.iloc[0] == 164


# --- the chapter's tables and results (notebooks/05_perturbation) -----------------------------


def _chapter_run():
    cases = synthetic_cases()
    corpora_ = {"heval-fix-py": cases[:6], "heval-fix-js": cases[6:]}
    names = [*corpora_, "pooled"]
    runs = P.corpus_trials(corpora_, [0, 1, 2], 3, seed=0, which=P.WHICH)
    summary = P.summarize_trials(runs, pool=list(corpora_))
    return corpora_, names, runs, summary


def test_corpus_trials_tags_each_corpus_and_matches_one_run_per_corpus():
    corpora_, _, runs, _ = _chapter_run()
    assert list(dict.fromkeys(runs.corpus)) == list(corpora_)
    one = P.perturbation_trials(corpora_["heval-fix-js"], [0, 1, 2], 3, 0, P.WHICH,
                                corpus="heval-fix-js", progress=False)  # fmt: skip
    pd.testing.assert_frame_equal(runs[runs.corpus == "heval-fix-js"].reset_index(drop=True), one)


def test_chapter_tables_have_a_row_per_corpus_and_the_papers_beside_ours():
    corpora_, names, _, summary = _chapter_run()
    both = summary[summary.which == "both"]
    t8 = P.table8_table(both, names, [0, 1, 2])
    assert list(t8.columns) == ["eps=0", "eps=1", "eps=2"]
    assert ("HEvalFix-Py", "ours") in t8.index and ("Pooled", "paper") in t8.index
    assert t8.loc[("HEvalFix-Py", "ours"), "eps=0"] == "100.00% ± 0.0"
    assert set(P.paper_difference_se(both, names, [0, 1, 2]).columns) <= {"eps=1", "eps=2"}
    assert len(P.endpoint_table(summary, names)) == len(names) * len(P.WHICH)
    unclamped = P.corpus_trials(corpora_, [1], 3, seed=0, clamp=False)
    t4 = P.table4_table(both, P.summarize_trials(unclamped, pool=list(corpora_)), names)
    assert len(t4) == 3 * len(names)
    assert (t4.xs("oracle programs (eps=0)")["clipped EM (byte-exact)"] == 1).all()
    swapped = P.summarize_trials(P.corpus_trials(corpora_, [1, 2], 3, 0, swap_inverted=True),
                                 pool=list(corpora_))  # fmt: skip
    sw = P.swap_table(both, swapped, names, [0, 1, 2])
    assert list(sw.columns) == ["kept", "swapped", "paper"] and len(sw) == 2 * len(names)


def test_chapter_numbers_are_plain_json_rounded_to_six_places():
    corpora_, names, _, summary = _chapter_run()
    both = summary[summary.which == "both"]
    t4 = P.table4_table(both, both, names)
    numbers = P.chapter_numbers(summary, t4, both, {"py": {}}, {"x": "missing"}, P.WHICH)
    json.dumps(numbers)  # plain Python types only: a numpy scalar would raise here
    assert list(numbers) == ["corpora_unavailable", "table8", "by_endpoint", "table4",
                             "swap_inverted", "endpoint_anchors"]  # fmt: skip
    cell = numbers["table8"]["pooled"][1]
    assert cell["runs"] == 3 * 12 and all(v == round(v, 6) for v in cell.values())
    assert list(numbers["by_endpoint"]) == list(P.WHICH)


def test_noise_demo_and_corpora_report_say_what_ran():
    case = synthetic_cases()[0]
    text = P.noise_demo(case, seed=0, eps_max=1, trials=2)
    assert text.startswith(f"{case.id}: ") and text.count("trimmed EM") == 2

    class Named(list):
        source = "local: somewhere"

    report = P.corpora_report({"syn": Named(synthetic_cases(3))}, {"gone": "no data"})
    assert report.splitlines() == ["            syn:   3 cases from local",
                                   "           gone: NOT AVAILABLE (no data)"]  # fmt: skip
