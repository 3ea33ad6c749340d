"""Semi-synthetic designs (known ATE, naive limit) and the intrinsic-dimension estimators."""
import jax
import ml_collections
import numpy as np
import pytest

from lib.latent_ate import baselines, intrinsic_dim, semisynthetic

SIM = ml_collections.ConfigDict(dict(theta=2.0, noise=1.0, gamma=-2.0, p1=0.7, p0=0.3,
                                     logit_scale=1.0, outcome_scale=1.0, coef_seed=42))


def test_label_design_naive_limit_and_oracle():
    rng = np.random.default_rng(0)
    label = (rng.uniform(size=5000) < 0.4).astype(np.float32)
    reps = semisynthetic.replicate(jax.random.key(0), label, "label", 2000, 40, SIM)
    idx = np.asarray(reps.idx)
    assert all(np.unique(r).size == 2000 for r in idx)              # without replacement
    np.testing.assert_allclose(reps.propensity, np.where(label[idx] > 0, 0.7, 0.3))
    np.testing.assert_allclose(reps.g, -2.0 * label[idx])           # true outcome term γC
    naive = np.asarray(jax.vmap(baselines.naive)(reps.y, reps.d)[0])
    limit = semisynthetic.naive_limit_label(label.mean(), 2.0, -2.0, 0.7, 0.3)
    assert limit == pytest.approx(2 - 2 * (0.28 / 0.46 - 0.12 / 0.54), rel=1e-3)
    assert abs(naive.mean() - limit) < 4 * naive.std() / np.sqrt(40)
    oracle = np.asarray(jax.vmap(baselines.oracle)(reps.y, reps.d, label[idx])[0])
    assert abs(oracle.mean() - 2.0) < 4 * oracle.std() / np.sqrt(40)


def test_complex_design_uses_the_code_and_has_overlap():
    rng = np.random.default_rng(1)
    u = rng.normal(size=(3000, 5)).astype(np.float32)
    reps = semisynthetic.replicate(jax.random.key(1), u, "complex", 1000, 8, SIM)
    g_a, g_y = semisynthetic.complex_coefficients(5, 42)
    assert np.all(g_y <= 0) and np.all(g_y >= -1)
    idx = np.asarray(reps.idx)
    np.testing.assert_allclose(reps.propensity, 1 / (1 + np.exp(-(u[idx] @ g_a))), rtol=1e-5)
    assert 0.01 < float(reps.propensity.min()) and float(reps.propensity.max()) < 0.99
    # y − θd − g is the pure noise ε: mean 0, sd `noise`, uncorrelated with g
    eps = np.asarray(reps.y - 2.0 * reps.d - reps.g)
    assert abs(eps.mean()) < 0.1 and eps.std() == pytest.approx(1.0, abs=0.05)
    assert abs(np.corrcoef(eps.ravel(), np.asarray(reps.g).ravel())[0, 1]) < 0.06
    oracle = np.asarray(jax.vmap(baselines.oracle)(reps.y, reps.d, u[idx])[0])
    assert abs(np.mean(oracle) - 2.0) < 0.1


def test_design_errors():
    with pytest.raises(ValueError, match=r"n = 50 exceeds the causal pool of 10 images"):
        semisynthetic.replicate(jax.random.key(0), np.zeros(10), "label", 50, 2, SIM)
    with pytest.raises(ValueError, match=r"setting must be one of"):
        semisynthetic.replicate(jax.random.key(0), np.zeros(10), "text", 5, 2, SIM)


@pytest.mark.parametrize("dim", [2, 5])
def test_intrinsic_dimension_of_a_curved_manifold_in_high_ambient_dimension(dim):
    rng = np.random.default_rng(dim)
    z = rng.uniform(size=(1500, dim))
    x = np.tanh(z @ rng.normal(size=(dim, 40)))                      # a dim-manifold in R^40
    assert intrinsic_dim.two_nn(x) == pytest.approx(dim, rel=0.2)
    assert intrinsic_dim.mle(x, 10) == pytest.approx(dim, rel=0.2)


def test_intrinsic_dimension_input_errors_and_duplicates():
    with pytest.raises(ValueError, match=r"NaN/inf"):
        intrinsic_dim.two_nn(np.array([[0.0, 1.0], [np.nan, 0.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"mle needs k >= 3"):
        intrinsic_dim.mle(np.zeros((10, 2)), 2)
    x = np.random.default_rng(0).normal(size=(500, 3))
    assert intrinsic_dim.two_nn(np.r_[x, x[:100]]) == pytest.approx(intrinsic_dim.two_nn(x))


def test_pixel_pooling_averages_blocks_and_rejects_bad_factors():
    from lib.latent_ate.features import pool_pixels
    x = np.arange(32, dtype=float).reshape(2, 16)                   # two 4×4 images
    np.testing.assert_array_equal(pool_pixels(x, 2)[0], [2.5, 4.5, 10.5, 12.5])
    np.testing.assert_array_equal(pool_pixels(x, 1), x)
    with pytest.raises(ValueError, match=r"cannot pool 16 pixels \(4² expected\) by 3"):
        pool_pixels(x, 3)

