"""GM container: NLL against a direct density, masks against numerical products, moments."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.stats import multivariate_normal

from lib.gmflow import mixture


@functools.partial(jax.jit, static_argnames=("batch", "k", "g", "c"))
def _random_gm(key, batch=3, k=4, g=2, c=3):
    k1, k2, k3 = jax.random.split(key, 3)
    return mixture.make_gm(jax.random.normal(k1, (batch, k, g, c)),
                           jax.random.normal(k2, (batch, k, g)),
                           0.3 * jax.random.normal(k3, (batch,)) - 0.5)


def test_log_prob_matches_direct_density():
    gm = _random_gm(jax.random.key(0))
    x = jax.random.normal(jax.random.key(1), (3, 2, 3))
    got = np.asarray(jax.jit(mixture.log_prob)(gm, x))
    w = np.exp(np.asarray(gm.logweights))
    s = np.exp(np.asarray(gm.logstd))
    for b in range(3):
        total = 0.0
        for g in range(2):   # pixel-wise factorisation: a product over groups
            dens = sum(w[b, k, g] * multivariate_normal.pdf(np.asarray(x[b, g]),
                                                            np.asarray(gm.means[b, k, g]),
                                                            s[b] ** 2 * np.eye(3))
                       for k in range(4))
            total += np.log(dens)
        np.testing.assert_allclose(got[b], total, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(mixture.nll_per_dim)(gm, x), -got / 6, rtol=1e-6)


def test_make_gm_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="GM shapes"):
        mixture.make_gm(jnp.zeros((2, 3, 1, 2)), jnp.zeros((2, 4, 1)), jnp.zeros((2,)))


def test_gaussian_mask_equals_numerical_product():
    """GM(x)·exp(−p x²/2 + h x), normalised on a fine 1-D grid, equals the masked GM."""
    gm = mixture.make_gm(jnp.array([[[[-1.0]], [[0.5]], [[2.0]]]]),
                         jnp.array([[[0.2], [-0.3], [0.1]]]), jnp.array([-0.7]))
    p, h = jnp.array([0.8]), jnp.array([[[1.1]]])
    grid = np.linspace(-8, 8, 20001)
    density = jax.jit(lambda g: jnp.exp(jax.vmap(lambda v: mixture.log_prob(
        g, v[None, None, None]))(jnp.asarray(grid, jnp.float32)))[:, 0])
    dens = np.asarray(density(gm)) * np.exp(-0.4 * grid ** 2 + 1.1 * grid)
    dens /= np.trapezoid(dens, grid)
    masked = jax.jit(mixture.gaussian_mask)(gm, p, h)
    got = np.asarray(density(masked))
    np.testing.assert_allclose(got, dens, atol=1e-5)


def test_zero_mask_is_identity_and_moments_match_samples():
    gm = _random_gm(jax.random.key(2), batch=2)
    same = jax.jit(mixture.gaussian_mask)(gm, jnp.zeros(2), jnp.zeros((2, 2, 3)))
    for a, b in zip(same, gm):
        np.testing.assert_allclose(a, b, atol=1e-6)
    xs = np.asarray(jax.jit(lambda g: mixture.sample(
        jax.tree.map(lambda a: jnp.repeat(a[:1], 40000, axis=0), g), jax.random.key(3)))(gm))
    mean, var = jax.jit(mixture.moment_match)(gm)
    np.testing.assert_allclose(xs.mean(0), mean[0], atol=0.03)
    np.testing.assert_allclose(((xs - xs.mean(0)) ** 2).mean(), var[0], rtol=0.03)


def test_dirac_is_a_point_mass():
    x = jnp.arange(6.0).reshape(1, 3, 2)
    d = mixture.dirac(x)
    assert d.means.shape == (1, 1, 3, 2) and d.logweights.shape == (1, 1, 3)
    np.testing.assert_allclose(mixture.mean(d), x)
    np.testing.assert_allclose(mixture.sample(d, jax.random.key(0)), x, atol=1e-6)
