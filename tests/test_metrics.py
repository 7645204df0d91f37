import math

import pytest
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


# Paired tests between two systems on the same cases


def test_mcnemar_exact_is_the_binomial_test_on_discordant_pairs():
    a = [True] * 8 + [False] * 10
    b = [False] * 8 + [False] * 10
    t = metrics.mcnemar_exact(a, b)
    assert (t["a_only"], t["b_only"], t["a"], t["b"], t["n"]) == (8, 0, 8, 0, 18)
    assert t["p"] == pytest.approx(2 * 0.5**8)  # two-sided, all 8 discordant pairs one way
    assert metrics.mcnemar_exact([True, False], [True, False])["p"] == 1.0  # no discordant pair
    with pytest.raises(ValueError, match="equal length"):
        metrics.mcnemar_exact([True], [True, False])


def test_paired_bootstrap_is_seeded_and_sees_a_clear_difference():
    a, b = [0.9, 0.8, 0.95, 0.85] * 5, [0.1, 0.2, 0.15, 0.05] * 5
    t = metrics.paired_bootstrap(a, b)
    assert t == metrics.paired_bootstrap(a, b)  # same seed, same interval
    assert t["diff"] == pytest.approx(0.75) and t["ci"][0] > 0 and t["p"] == 0.0
    assert metrics.paired_bootstrap(a, a)["p"] == 1.0


def test_a_bootstrap_p_of_zero_is_shown_as_its_resolution():
    assert metrics.format_p(0.0, "paired bootstrap") == "< 0.0001"
    assert metrics.format_p(0.0, "McNemar exact") == "0"
    assert metrics.format_p(0.01234, "paired bootstrap") == "0.0123"


def test_holm_adjusts_step_down():
    assert metrics.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert metrics.holm([0.5]) == [0.5]
