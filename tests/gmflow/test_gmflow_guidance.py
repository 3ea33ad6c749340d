"""Probabilistic guidance and CFG: closed forms for K = 1, identities, range errors."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.gmflow import guidance, mixture


@functools.partial(jax.jit, static_argnames=("k", "batch", "g", "c", "logstd"))
def _gm(key, k=1, batch=2, g=4, c=1, logstd=-0.5):
    k1, k2 = jax.random.split(key)
    return mixture.make_gm(jax.random.normal(k1, (batch, k, g, c)),
                           jax.random.normal(k2, (batch, k, g)), jnp.full((batch,), logstd))


def test_probabilistic_guidance_k1_is_the_target_gaussian():
    """For K = 1 the reweighted GM is exactly N(μ_c + bias, (1 − w̃²) s_c²) with ‖bias‖²/D =
    w̃² s_c² and the bias orthogonal to μ_c."""
    cond, uncond = _gm(jax.random.key(0)), _gm(jax.random.key(1))
    w = 0.6

    @jax.jit
    def moments(cond, uncond):
        out = guidance.probabilistic_guidance(cond, uncond, w, orthogonal=1.0)
        mu_c = mixture.moment_match(cond)[0]
        direction = mu_c - mixture.mean(uncond)      # bias ∥ Δ − (Δ·μ_c/‖μ_c‖²) μ_c
        return (mixture.moment_match(cond), mixture.moment_match(out),
                guidance.orthogonalise(direction, mu_c))

    (mu_c, var_c), (mu, var), perp = jax.tree.map(np.asarray, moments(cond, uncond))
    bias = mu - mu_c
    np.testing.assert_allclose(var, (1 - w ** 2) * var_c, rtol=1e-5)
    np.testing.assert_allclose(np.mean(bias ** 2, axis=(-2, -1)), w ** 2 * var_c, rtol=1e-4)
    np.testing.assert_allclose(np.sum(bias * mu_c, axis=(-2, -1)), 0.0, atol=1e-4)
    cos = np.sum(bias * perp, (-2, -1)) / np.linalg.norm(bias.reshape(2, -1), axis=-1) \
        / np.linalg.norm(perp.reshape(2, -1), axis=-1)
    np.testing.assert_allclose(cos, 1.0, atol=1e-4)


def test_probabilistic_guidance_zero_strength_keeps_the_conditional_gm():
    cond, uncond = _gm(jax.random.key(0), k=3), _gm(jax.random.key(1), k=3)
    out = jax.jit(guidance.probabilistic_guidance)(cond, uncond, 0.0)
    for a, b in zip(out, cond):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_guidance_keeps_k_components_and_lowers_variance():
    cond, uncond = _gm(jax.random.key(2), k=5), _gm(jax.random.key(3), k=5)
    out = jax.jit(guidance.probabilistic_guidance)(cond, uncond, 0.5)
    assert out.means.shape == cond.means.shape
    assert np.all(np.asarray(out.logstd) < np.asarray(cond.logstd))


def test_cfg_interpolates_and_extrapolates_means():
    cond, uncond = _gm(jax.random.key(4), k=2), _gm(jax.random.key(5), k=2)
    mc, mu = np.asarray(mixture.mean(cond)), np.asarray(mixture.mean(uncond))
    guided_mean = jax.jit(lambda w: mixture.mean(guidance.classifier_free_guidance(
        cond, uncond, w, orthogonal=0.0)))
    for w in (0.0, 1.0, 3.0):
        np.testing.assert_allclose(guided_mean(w), mu + w * (mc - mu), atol=1e-5)


def test_guided_denoiser_batches_cond_and_uncond():
    calls = []

    def x0_fn(x, t, labels):
        calls.append(labels.shape)
        return mixture.dirac(x + labels[:, None, None].astype(x.dtype))

    labels = jnp.array([1, 2])
    den = guidance.guided_denoiser(x0_fn, labels, 10, "cfg", 2.0, orthogonal=0.0)
    x = jnp.zeros((2, 1, 1))
    out = mixture.mean(den(x, 0.5))       # μ_u + 2 (μ_c − μ_u) with μ_u = 10
    np.testing.assert_allclose(out[:, 0, 0], 10 + 2 * (labels - 10.0))
    assert calls == [(4,)]


@pytest.mark.parametrize("kind,w", [("probabilistic", 1.0), ("probabilistic", -0.1),
                                    ("cfg", -1.0)])
def test_guidance_out_of_range_raises(kind, w):
    with pytest.raises(ValueError, match="must be"):
        guidance.check_scale(kind, w)
    with pytest.raises(ValueError, match="must be"):
        guidance.guided_denoiser(lambda x, t, l: mixture.dirac(x), jnp.zeros(1, jnp.int32), 1,
                                 kind, w)
