"""Metrics against closed forms."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import metrics


def _trajectories(b=3, t=6, n=8, c=2):
    return jax.random.normal(jax.random.key(0), (b, t, n, n, c))


def test_identical_trajectories():
    true = _trajectories()
    out = metrics.evaluate_rollouts(true, true, dt=0.5)
    assert float(out["rmse"][0]) == 0.0 and float(out["mae"][0]) == 0.0 and float(out["mnad"][0]) == 0.0
    np.testing.assert_allclose(out["correlation"][0], 1.0, atol=1e-6)
    assert float(out["hct"][0]) == pytest.approx(6 * 0.5)
    assert float(out["hct"][1]) == 0.0


def test_constant_offset_closed_forms():
    true = _trajectories()
    out = metrics.evaluate_rollouts(true + 0.3, true, dt=1.0)
    rng = jax.vmap(lambda x: x.max() - x.min())(true)
    np.testing.assert_allclose(out["rmse"][0], 0.3, rtol=1e-5)
    np.testing.assert_allclose(out["mae"][0], 0.3, rtol=1e-5)
    np.testing.assert_allclose(out["mnad"][0], jnp.mean(0.3 / rng), rtol=1e-5)
    np.testing.assert_allclose(out["mnad"][1], jnp.std(0.3 / rng), rtol=1e-4)
    np.testing.assert_allclose(out["correlation"][0], 1.0, atol=1e-6)  # an offset keeps the correlation


def test_hct_at_known_crossing():
    """pred_t = cos θ_t · z + sin θ_t · w with z ⟂ w, so corr(pred_t, z) = cos θ_t exactly."""
    n = 64
    g = 2 * np.pi * np.arange(n) / n
    z, w = np.sin(g), np.cos(g)  # orthogonal, zero mean, equal norm
    corr = np.array([0.99, 0.95, 0.9, 0.85, 0.79, 0.9, 0.5])  # first drop after frame 4 (index 3)
    theta = np.arccos(corr)
    pred = np.cos(theta)[:, None] * z + np.sin(theta)[:, None] * w
    true = np.broadcast_to(z, pred.shape)
    got = metrics.correlation_per_step(jnp.asarray(pred), jnp.asarray(true))
    np.testing.assert_allclose(got, corr, atol=1e-5)
    assert float(metrics.high_correlation_time(got, dt=0.1)) == pytest.approx(0.4)
    assert float(metrics.high_correlation_time(got, dt=0.1, mode="total")) == pytest.approx(0.5)
    assert float(metrics.high_correlation_time(got, dt=0.1, threshold=0.95)) == pytest.approx(0.2)


def test_hct_batched_spread():
    corr_a = jnp.array([0.9, 0.9, 0.1, 0.9])
    corr_b = jnp.array([0.9, 0.9, 0.9, 0.9])
    hct = jax.vmap(lambda c: metrics.high_correlation_time(c, dt=2.0))(jnp.stack([corr_a, corr_b]))
    np.testing.assert_allclose(hct, [4.0, 8.0])


def test_bad_input():
    with pytest.raises(ValueError, match="unknown HCT mode"):
        metrics.high_correlation_time(jnp.ones(3), dt=1.0, mode="sum")
    with pytest.raises(ValueError, match="differs from truth shape"):
        metrics.evaluate_rollouts(jnp.ones((1, 2, 3)), jnp.ones((1, 2, 4)), dt=1.0)
