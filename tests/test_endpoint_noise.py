"""The endpoint-noise model (cadlib.endpoint_noise): offsets, clamping, inverted ranges, and
the seeded trials that resolve what the noise gives."""

import collections
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadlib import endpoint_noise as N
from cadlib.cases import EditCase
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
    for which in N.WHICH:
        assert N.perturb_program(big, 200, 0, rng, which) == big


def test_offsets_are_uniform_integers_in_the_closed_interval():
    rng = np.random.default_rng(1)
    eps = 3
    counts = collections.Counter()
    for _ in range(2000):
        for d_start, d_end in offsets(big, N.perturb_program(big, 200, eps, rng)):
            counts[d_start] += 1
            counts[d_end] += 1
    assert set(counts) == set(range(-eps, eps + 1))  # both signs, every value, nothing else
    expected = sum(counts.values()) / (2 * eps + 1)
    assert all(abs(c - expected) < 0.1 * expected for c in counts.values())


def test_endpoints_move_independently():
    rng = np.random.default_rng(2)
    pairs = [o for _ in range(500) for o in offsets(big, N.perturb_program(big, 200, 1, rng))]
    assert len(set(pairs)) == 9  # every (d_start, d_end) combination occurs


def test_which_selects_the_noisy_endpoint_with_common_random_numbers():
    both = N.perturb_program(big, 200, 5, np.random.default_rng(3), "both")
    start = N.perturb_program(big, 200, 5, np.random.default_rng(3), "start")
    end = N.perturb_program(big, 200, 5, np.random.default_rng(3), "end")
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
@given(programs, st.integers(1, 16), st.integers(0, 6), st.sampled_from(N.WHICH), st.integers(0))
def test_clamped_endpoints_lie_in_the_document(program, n_lines, eps, which, seed):
    noisy = N.perturb_program(program, n_lines, eps, np.random.default_rng(seed), which)
    for op in noisy.copies:
        assert 1 <= op.start <= n_lines and 1 <= op.end <= n_lines


@settings(max_examples=200)
@given(programs, st.integers(1, 16), st.integers(0, 6), st.integers(0))
def test_clipped_resolver_on_raw_noise_equals_clamped_noise(program, n_lines, eps, seed):
    doc = "\n".join(f"line {k}" for k in range(1, n_lines + 1))
    raw = N.perturb_program(program, n_lines, eps, np.random.default_rng(seed), clamp=False)
    clamped = N.perturb_program(program, n_lines, eps, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RangeClippedWarning)
        assert resolve(raw, doc, "clipped") == resolve(clamped, doc, "clipped")


def test_clamping_saturates_at_the_document_edges():
    program = Program([Copy(1, 3)])
    seen = set()
    rng = np.random.default_rng(4)
    for _ in range(300):
        (op,) = N.perturb_program(program, 3, 5, rng).copies
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
        (op,) = N.perturb_program(Program([Copy(2, 2)]), 3, 2, rng, swap_inverted=True).copies
        assert op.start <= op.end


def test_gen_ops_are_untouched():
    program = Program([Gen("head"), Copy(2, 3), Gen("tail")])
    noisy = N.perturb_program(program, 5, 2, np.random.default_rng(6))
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
        N.perturb_program(**args)


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


def test_same_seed_same_results_and_independent_of_case_order():
    cases = synthetic_cases()
    a = N.perturbation_trials(cases, [1, 3], trials=3, seed=11, which=N.WHICH, progress=False)
    b = N.perturbation_trials(cases, [1, 3], trials=3, seed=11, which=N.WHICH, progress=False)
    pd.testing.assert_frame_equal(a, b)
    c = N.perturbation_trials(cases[::-1], [1, 3], 3, seed=11, which=N.WHICH, progress=False)
    key = ["case", "eps_max", "which", "trial"]
    pd.testing.assert_frame_equal(
        a.sort_values(key, ignore_index=True), c.sort_values(key, ignore_index=True)
    )
    d = N.perturbation_trials(cases, [1, 3], trials=3, seed=12, which=N.WHICH, progress=False)
    assert not a.equals(d)


def test_noise_lowers_em_and_strict_counts_inverted_ranges():
    runs = N.perturbation_trials(synthetic_cases(), [0, 2], trials=5, seed=0, progress=False)
    noisy = runs[runs.eps_max == 2]
    assert noisy.em_trimmed.mean() < 1
    # clamped noise never leaves the document, so strict rejects exactly the inverted ranges
    assert (noisy.strict_rejected == noisy.inverted).all()
    assert (noisy.strict_em_trimmed <= noisy.em_trimmed).all()
