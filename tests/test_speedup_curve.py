import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cadlib.chapters import ceiling
from cadlib.costs import speedup_curve as SC


@given(
    st.lists(st.floats(0.1, 1000), min_size=1, max_size=10),
    st.lists(st.floats(0.01, 10_000), min_size=1, max_size=5),
)
def test_ceiling_and_kernel_interpolations_agree_on_positive_spans(s_values, n):
    N = [2**k for k in range(len(s_values))]  # chapter 3 asserts this agreement
    a = ceiling.interpolate_loglinear(N, s_values, n)
    b = SC.speedup_at((N, s_values), n)
    assert np.array_equal(a, b)


def test_non_positive_spans_clamp_in_ceiling_and_fail_in_kernel():
    N, s = [1, 4, 16], [1.0, 3.0, 9.0]
    assert ceiling.interpolate_loglinear(N, s, [0, -1]).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="positive and finite"):
        SC.interpolate_loglinear(N, s, 0)
    with pytest.raises(ValueError, match="positive and finite"):
        SC.speedup_at((N, s), 0)


@pytest.mark.parametrize("N, s", [([0.5, 1], [1.0, 2.0]), ([1, 2], [1.0, np.inf])])
def test_one_validation_for_both(N, s):
    for f in (lambda: ceiling.interpolate_loglinear(N, s, 2), lambda: SC.speedup_at((N, s), 2)):
        with pytest.raises(ValueError, match="curve"):
            f()
