"""lib.toolbox.stats against closed forms."""
import math

import pytest

from lib.toolbox import stats


def test_sign_test_p_closed_forms():
    assert stats.sign_test_p(0, 0) == 1.0
    assert stats.sign_test_p(3, 0) == pytest.approx(1 / 8)
    assert stats.sign_test_p(2, 2) == pytest.approx(11 / 16)     # (6 + 4 + 1) / 16


def test_wilson_interval_known_values():
    lo, hi = stats.wilson_interval(5, 10)
    half = 1.959964 * math.sqrt(0.025 + 1.959964 ** 2 / 400) / (1 + 1.959964 ** 2 / 10)
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half))   # symmetric around 1/2
    assert stats.wilson_interval(0, 10)[0] == 0.0 and stats.wilson_interval(0, 10)[1] > 0.0
    assert all(math.isnan(x) for x in stats.wilson_interval(0, 0))
