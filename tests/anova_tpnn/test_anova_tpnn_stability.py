"""Stability score, centring, recovery error: closed forms and invariances."""
import numpy as np
import pytest

from lib.anova_tpnn import stability


def test_identical_or_rescaled_replicas_score_zero_and_opposite_ones_score_one():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(1, 50, 3))
    scales = np.array([0.5, 1.0, 7.0])[:, None, None]
    same = v * scales                                     # equal up to a positive factor
    np.testing.assert_allclose(stability.stability_scores(same)["var"], 0.0, atol=1e-12)
    opposite = np.concatenate([v, -v])
    np.testing.assert_allclose(stability.stability_scores(opposite)["var"], 1.0, atol=1e-12)
    np.testing.assert_allclose(np.mean(stability.normalise(same) ** 2, axis=1), 1.0)


def test_score_matches_a_direct_computation_and_zero_vectors_stay_zero():
    rng = np.random.default_rng(1)
    comps = rng.normal(size=(4, 30, 2))
    comps[2, :, 1] = 0.0
    u = comps / np.sqrt(np.mean(comps ** 2, axis=1, keepdims=True) + (comps == 0).all(1, keepdims=True))
    expected = np.mean(np.var(u, axis=0), axis=0)
    np.testing.assert_allclose(stability.stability_scores(comps)["var"], expected, rtol=1e-12)
    assert np.all(stability.normalise(comps)[2, :, 1] == 0)


def test_centring_removes_shifts_that_the_raw_score_penalises():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(1, 40, 1))
    base -= base[:, :30].mean(axis=1, keepdims=True)
    shifted = base + np.array([0.0, 2.0, -1.0])[:, None, None]    # NAM-style intercept drift
    assert stability.stability_scores(shifted)["var"][0] > 0.1
    centred = stability.centre(shifted, slice(0, 30))
    np.testing.assert_allclose(stability.stability_scores(centred)["var"], 0.0, atol=1e-12)


def test_recovery_error_is_zero_for_truth_and_one_for_zeros():
    rng = np.random.default_rng(3)
    truth = rng.normal(size=(25, 4))
    np.testing.assert_allclose(stability.recovery_error(truth[None], truth), 0.0)
    np.testing.assert_allclose(stability.recovery_error(np.zeros((2, 25, 4)), truth), 1.0)
    half = stability.recovery_error(0.5 * truth[None], truth)
    np.testing.assert_allclose(half, 0.25)


def test_signal_variance_ratio_is_replica_variance_over_true_variance_on_signal_columns():
    rng = np.random.default_rng(4)
    truth = rng.normal(size=(30, 4))
    truth[:, 2] = 0.0                                       # a component without signal
    truth[:, 3] *= 1e-3                                     # 1e-6 of the variance: none either
    truth -= truth.mean(axis=0)
    pattern = rng.normal(size=(30, 4))
    d = np.array([0.1, 0.5, 9.0, 0.1])
    est = np.stack([truth + d * pattern, truth - d * pattern])   # Var_r = (d · pattern)²
    ratio, cols = stability.signal_variance_ratio(est, truth)
    assert list(cols) == [0, 1]                             # null columns do not enter
    expected = d[:2] ** 2 * np.mean(pattern[:, :2] ** 2, 0) / np.mean(truth[:, :2] ** 2, 0)
    np.testing.assert_allclose(ratio, expected, rtol=1e-12)
    again, _ = stability.signal_variance_ratio(7.0 * est, 7.0 * truth)    # same units: scale-free
    np.testing.assert_allclose(again, ratio, rtol=1e-12)
    with pytest.raises(ValueError, match="est must be"):
        stability.signal_variance_ratio(est, truth[:, :2])

