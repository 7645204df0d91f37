import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cadlib.costs import speedup_curve as SC


@given(
    st.lists(st.floats(0.1, 1000), min_size=1, max_size=10),
    st.lists(st.floats(0.01, 10_000), min_size=1, max_size=5),
)
def test_clamped_and_checked_interpolations_agree_on_positive_spans(s_values, n):
    N = [2**k for k in range(len(s_values))]  # chapter 3 asserts this agreement
    a = SC.interpolate_loglinear(N, s_values, n, clamp_nonpositive=True)
    b = SC.speedup_at((N, s_values), n)
    assert np.array_equal(a, b)


def test_non_positive_spans_clamp_only_when_asked():
    N, s = [1, 4, 16], [1.0, 3.0, 9.0]
    assert SC.interpolate_loglinear(N, s, [0, -1], clamp_nonpositive=True).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="positive and finite"):
        SC.interpolate_loglinear(N, s, 0)
    with pytest.raises(ValueError, match="positive and finite"):
        SC.speedup_at((N, s), 0)


@pytest.mark.parametrize("N, s", [([0.5, 1], [1.0, 2.0]), ([1, 2], [1.0, np.inf])])
def test_one_validation_for_both(N, s):
    for f in (
        lambda: SC.interpolate_loglinear(N, s, 2, clamp_nonpositive=True),
        lambda: SC.speedup_at((N, s), 2),
    ):
        with pytest.raises(ValueError, match="curve"):
            f()
