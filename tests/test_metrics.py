import math

from hypothesis import given
from hypothesis import strategies as st

from cadlib import metrics


def test_the_three_exact_matches_differ_where_the_paper_says():
    assert metrics.byte_equal("a\n", "a\n") and not metrics.byte_equal("a\n", "a")
    assert metrics.equal_up_to_one_newline("a\n", "a")
    assert not metrics.equal_up_to_one_newline("a\n\n", "a")  # one newline only
    assert metrics.equal_stripped("a\n\n", "a") and metrics.equal_stripped(" a\t", "a")  # Table 8
    assert not metrics.equal_up_to_one_newline(" a", "a")


@given(st.text(alphabet="ab\n "), st.text(alphabet="ab\n "))
def test_each_metric_is_implied_by_the_stricter_one(a, b):
    if metrics.byte_equal(a, b):
        assert metrics.equal_up_to_one_newline(a, b)
    if metrics.equal_up_to_one_newline(a, b):
        assert metrics.equal_stripped(a, b)
    assert metrics.strip_one_newline(a) == (a[:-1] if a.endswith("\n") else a)


def test_wilson_ci():
    lo, hi = metrics.wilson_ci(12, 99)  # paper Table 6: [7.0, 20.1] (rounded differently)
    assert (round(100 * lo, 1), round(100 * hi, 1)) == (7.1, 20.0)
    assert all(math.isnan(x) for x in metrics.wilson_ci(0, 0))
