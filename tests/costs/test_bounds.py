"""Speedup bounds from a cover and an s(N) curve (cadlib.costs.bounds; paper §4.2, Table 2)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cadlib import paper
from cadlib.costs import bounds as B


@pytest.mark.parametrize("corpus", ["probeedit", "heval-fix-py", "heval-fix-js", "pooled"])
def test_bound_uniform_reproduces_the_papers_bnd_m8_from_its_own_columns(corpus):
    p = paper.TABLE2[corpus]
    assert p["T"] == p["T_copy"] + p["T_gen"]
    assert round(B.bound_uniform(p["T"], p["T_gen"], p["T_copy"], 6.79), 2) == p["bnd_m8"]


def test_implied_speedup_inverts_bound_uniform():
    b = B.bound_uniform(100, 20, 80, 7.5)
    assert B.implied_speedup(100, 20, 80, b) == pytest.approx(7.5)


spans_st = st.lists(st.integers(0, 600), min_size=1, max_size=30)


@given(spans_st, st.integers(0, 500), st.floats(1.0, 100.0))
def test_exact_bound_with_a_flat_curve_is_the_uniform_bound(spans, T_gen, s):
    T = sum(spans) + T_gen
    if T == 0:
        return
    exact = B.bound_exact(T, T_gen, spans, [1, 512], [s, s])
    assert exact == pytest.approx(B.bound_uniform(T, T_gen, sum(spans), s))


@given(spans_st, st.integers(1, 500))
def test_exact_bound_lies_between_the_curves_extremes(spans, T_gen):
    N, s = [1, 8, 64, 512], [1.0, 6.0, 40.0, 90.0]
    T = sum(spans) + T_gen
    exact = B.bound_exact(T, T_gen, spans, N, s)
    lo = B.bound_uniform(T, T_gen, sum(spans), 1.0)
    hi = B.bound_uniform(T, T_gen, sum(spans), 90.0)
    assert lo - 1e-9 <= exact <= hi + 1e-9 and exact >= 1 - 1e-9


def test_min_span_policy_regenerates_short_spans():
    N, s = [1, 512], [2.0, 2.0]
    # spans 0 and 4 fall below m = 8: 4 tokens regenerated, the 16-token span spliced at 2x
    assert B.bound_exact(30, 10, [0, 4, 16], N, s, min_span=8) == pytest.approx(30 / (10 + 4 + 8))
    assert B.bound_exact(30, 10, [0, 4, 16], N, s) == pytest.approx(30 / (10 + 2 + 8))


def test_line_bounds_with_the_papers_s8():
    summary = {"T": 100, "T_gen": 20, "T_copy": 80, "mean": 40.0}
    b = B.line_bounds(summary, [40, 40], [8, 512], [6.79, 6.79])
    assert b["bnd_m8"] == b["bnd_mean"] == pytest.approx(b["bnd_exact"])
    assert b["s_m8"] == pytest.approx(6.79)


def test_paper_reference_curve_labels_its_sources():
    curve = B.paper_reference_curve()
    assert list(curve.N) == sorted(curve.N)
    quoted = curve[curve.source.str.startswith("quoted")]
    assert dict(zip(quoted.N, quoted.s, strict=True)) == {8: 6.79, 512: 90.5}
    assert (curve.source.str.startswith("assumed")).sum() == len(paper.S_7B_ASSUMED)
    assert len(B.paper_reference_curve(with_implied=False, assumed={})) == 2


def test_curve_coverage_counts_spans_outside_the_measured_range():
    cov = B.curve_coverage([0, 1, 8, 600], [2, 512])
    assert cov["spans_above"] == 0.25 and cov["tokens_above"] == pytest.approx(600 / 609)
    assert cov["spans_below"] == 0.25 and cov["tokens_below"] == pytest.approx(1 / 609)
    assert (cov["N_min"], cov["N_max"]) == (2.0, 512.0)
