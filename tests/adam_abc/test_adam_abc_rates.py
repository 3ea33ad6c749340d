"""Slopes, bootstrap intervals, last-iterate summaries and targets on hand-made records."""
import numpy as np
import pytest

from lib.adam_abc import rates, report


def _records(horizon, runs, level, k, rng):
    """Records whose time average is `level` per run (up to noise) and whose grid values
    decrease to `level`."""
    per_step = level * (1 + 0.1 * rng.standard_normal((runs, 1)))
    grid = np.linspace(3, 1, k)[None, :] * per_step
    return {"sum": np.repeat(per_step * horizon / k, k, axis=1), "last": grid,
            "max": grid}


def test_loglog_slope_recovers_a_power_law():
    t = np.array([10, 100, 1000, 1e4])
    slope, intercept = rates.loglog_slope(t, 3.0 * t ** -0.5)
    assert slope == pytest.approx(-0.5, abs=1e-12)
    assert intercept == pytest.approx(np.log(3.0), abs=1e-12)
    with pytest.raises(ValueError, match="need >= 2 matching points"):
        rates.loglog_slope([1.0], [2.0])


def test_rate_summary_slopes_and_bootstrap_interval_cover_the_truth():
    rng = np.random.default_rng(0)
    horizons = [64, 128, 256, 512]
    records = [_records(t, 400, 2.0 * t ** -0.5, 8, rng) for t in horizons]
    s = rates.rate_summary(horizons, records, num_boot=300)
    for stat in ("avg", "min", "last"):
        lo, hi = s[f"slope_{stat}_ci"]
        assert lo < -0.5 < hi and hi - lo < 0.05, (stat, lo, hi)
        assert s[f"slope_{stat}"] == pytest.approx(-0.5, abs=0.02)
    assert s["avg"][0] == pytest.approx(2.0 / 8, rel=0.05)
    assert s["min"][0] == pytest.approx(s["last"][0])


def test_tail_sup_and_asymptotic_summary_on_a_hand_example():
    np.testing.assert_array_equal(rates.tail_sup(np.array([[1, 3, 2, 0]])), [[3, 3, 2, 0]])
    times = np.array([0, 1, 10, 100])
    last = np.array([[4.0, 1.0, 0.04, 0.0001],       # ‖∇f‖ = 2, 1, 0.2, 0.01
                     [4.0, 4.0, 1.0, 0.01]])         # ‖∇f‖ = 2, 2, 1, 0.1
    seg_max = np.array([[-np.inf, 9.0, 1.0, 0.04],
                        [-np.inf, 4.0, 4.0, 1.0]])
    s = rates.asymptotic_summary(times, {"last": last, "max": seg_max}, threshold=0.05,
                                 late_from=0.05)
    np.testing.assert_allclose(s["l1"], [2.0, 1.5, 0.6, 0.055])
    np.testing.assert_allclose(s["frac_below"], [0, 0, 0, 0.5])
    # sup_{s >= t}: run 0 → [3, 1, 0.2, 0.01]; run 1 → [2, 2, 1, 0.1]
    np.testing.assert_allclose(s["tail_quantiles"]["1.0"], [3, 2, 1, 0.1])
    np.testing.assert_allclose(s["frac_tail_below"], [0, 0, 0, 0.5])
    assert s["late_slope"] == pytest.approx(np.log(0.055 / 0.6) / np.log(10))


def _rate_result(slopes: dict) -> dict:
    runs = {name: {"slope_avg": a, "slope_min": m} for name, (a, m) in slopes.items()}
    return {"runs": runs, "theory_slope": -0.5, "tolerance": 0.1}


def test_targets_compare_with_theory_sgd_eps_and_controls():
    t = report.rate_targets(_rate_result({
        "q-g/adam": (-0.52, -0.45), "q-g/sgd": (-0.49, -0.30), "q-g/adam_eps": (-0.5, -0.5),
        "q-g/adam_const_alpha": (-0.05, 0.0), "q-s/adam_const_beta2": (-0.45, -0.5)}))
    assert t["slope_within_tolerance"]["q-g/adam"] == {"avg": True, "min": True}
    assert t["slope_within_tolerance"]["q-g/sgd"] == {"avg": True, "min": False}
    assert t["adam_matches_sgd"]["q-g"] == {"avg": True, "min": False}
    assert t["eps_does_not_matter"]["q-g"] == {"avg": True, "min": True}
    assert t["control_shows_failure"] == {"q-g/adam_const_alpha": True,
                                          "q-s/adam_const_beta2": False}
    a = report.asymptotic_targets({"min_decay": 0.1, "runs": {
        "q-g/adam": {"late_slope": -0.3}, "q-g/adam_const_alpha": {"late_slope": 0.01},
        "q-g/adam_const_beta2": {"late_slope": -0.3}}})
    assert a == {"theory_runs_converge": {"q-g/adam": True},
                 "control_shows_failure": {"q-g/adam_const_alpha": True,
                                           "q-g/adam_const_beta2": False}}
