"""The two differentiable pieces whose gradients once turned NaN: `scoring.normalise` at a zero
vector and the PointNet's max pooling (`model.max_pool`). This directory compiles with XLA's
backend optimisation off (conftest.py), the setting under which the pooling did."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from lib.fleg3d import scoring
from lib.fleg3d.model import max_pool


def test_normalise_is_x_over_norm_away_from_zero_and_unit_norm():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 6, 384)) * np.logspace(-3, 3, 6)[None, :, None]   # |x| ~2e-2 .. 2e4
    u = np.asarray(jax.jit(scoring.normalise)(jnp.asarray(x, jnp.float32)))
    np.testing.assert_allclose(u, x / np.linalg.norm(x, axis=-1, keepdims=True),
                               rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(np.linalg.norm(u, axis=-1), 1.0, atol=1e-6)
    # along another axis too
    along0 = jax.jit(functools.partial(scoring.normalise, axis=0))
    v = np.asarray(along0(jnp.asarray(x[:, 0], jnp.float32)))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, atol=1e-6)


def test_normalise_at_zero_is_zero_with_finite_gradient():
    zero = jnp.zeros((2, 5), jnp.float32)
    assert np.all(np.asarray(jax.jit(scoring.normalise)(zero)) == 0)
    # x / sqrt(|x|² + eps²) has Jacobian I/eps at 0 (x / (|x| + eps) via jnp.linalg.norm: NaN)
    jac = np.asarray(jax.jit(jax.jacfwd(lambda v: scoring.normalise(v, eps=0.5)))(zero[0]))
    np.testing.assert_allclose(jac, np.eye(5) / 0.5, atol=1e-6)
    grad = jax.jit(jax.grad(lambda v: jnp.sum(scoring.normalise(v) * jnp.arange(5.0))))(zero)
    grad = np.asarray(grad)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, np.tile(np.arange(5.0) / scoring.NORM_EPS, (2, 1)), rtol=1e-5)


def test_loss_gradient_is_finite_without_geometry():
    # e ≡ 0 (FILP-3D-like / w/o embedding): the alignment term normalises a zero vector
    text = np.eye(3, 8, dtype=np.float32)
    out = {"z": np.random.default_rng(1).normal(size=(4, 8)).astype(np.float32),
           "e": np.zeros((4, 8), np.float32)}
    loss = functools.partial(scoring.base_loss, temperature=0.1, align_weight=0.5)
    grads = jax.jit(jax.grad(lambda o: loss(o, np.array([0, 1, 2, 0]), text)[0]))(out)
    for k in ("z", "e"):
        assert np.all(np.isfinite(np.asarray(grads[k]))), k
    assert np.abs(np.asarray(grads["z"])).max() > 0


def test_max_pool_value_and_gradient_match_max():
    h = jnp.asarray(np.random.default_rng(2).normal(size=(3, 7, 4)), jnp.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(max_pool)(h)), np.asarray(h.max(axis=-2)))
    w = jnp.arange(12.0).reshape(3, 4)
    g = np.asarray(jax.jit(jax.grad(lambda h: jnp.sum(max_pool(h) * w)))(h))
    # closed form: w[b, c] at the (unique) maximiser over the points, 0 elsewhere
    first = np.asarray(jax.nn.one_hot(jnp.argmax(h, axis=-2), 7, axis=-2))
    expect = first * np.asarray(w)[:, None, :]
    np.testing.assert_array_equal(g, expect)


def test_max_pool_gradient_at_ties_goes_to_the_first_maximiser():
    h = jnp.array([[0.0, 2.0], [0.0, 2.0], [-1.0, 1.0]])           # both columns tied
    g = np.asarray(jax.jit(jax.grad(lambda h: jnp.sum(max_pool(h))))(h))
    np.testing.assert_array_equal(g, [[1, 1], [0, 0], [0, 0]])
