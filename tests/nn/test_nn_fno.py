"""FNO: shapes, exact translation equivariance, resolution consistency, jit + grad."""
import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.nn import FNO, SpectralConv


def _fno(spatial_dims: int) -> FNO:
    return FNO(out_channels=3, modes=4, width=8, depth=2, projection_width=16, spatial_dims=spatial_dims)


@pytest.mark.parametrize("spatial_dims, shape", [(1, (2, 32, 2)), (2, (2, 16, 24, 2))])
def test_fno_output_shape(spatial_dims, shape):
    x = jax.random.normal(jax.random.key(0), shape)
    model = _fno(spatial_dims)
    params = jax.jit(model.init)(jax.random.key(1), x)
    chex.assert_shape(jax.jit(model.apply)(params, x), shape[:-1] + (3,))


def test_fno_translation_equivariance_2d():
    x = jax.random.normal(jax.random.key(0), (16, 16, 2))
    model = _fno(2)
    params = jax.jit(model.init)(jax.random.key(1), x)
    apply = jax.jit(model.apply)                       # one program for both inputs
    shift = (3, -5)
    rolled_out = apply(params, np.roll(x, shift, axis=(0, 1)))
    out_rolled = np.roll(apply(params, x), shift, axis=(0, 1))
    np.testing.assert_allclose(rolled_out, out_rolled, atol=1e-5)
    # the check can fail: a non-trivial output that a roll of the wrong size would not match
    assert np.abs(out_rolled - np.roll(out_rolled, 1, axis=0)).max() > 1e-2


def test_fno_translation_equivariance_1d():
    x = jax.random.normal(jax.random.key(0), (32, 2))
    model = _fno(1)
    params = jax.jit(model.init)(jax.random.key(1), x)
    apply = jax.jit(model.apply)
    np.testing.assert_allclose(
        apply(params, np.roll(x, 7, axis=0)), np.roll(apply(params, x), 7, axis=0), atol=1e-5
    )


def test_spectral_conv_resolution_consistency():
    """A band-limited input sampled on 32² and 64² gives the same output at shared points."""
    def field(n: int) -> jax.Array:
        g = 2 * np.pi * np.arange(n) / n
        x, y = np.meshgrid(g, g, indexing="xy")
        u = np.sin(x + 2 * y) + 0.5 * np.cos(3 * x - y)
        v = np.cos(2 * x) * np.sin(y)
        return jnp.asarray(np.stack([u, v], axis=-1), jnp.float32)

    layer = SpectralConv(out_channels=3, modes=6)
    params = jax.jit(layer.init)(jax.random.key(0), field(32))
    apply = jax.jit(layer.apply)
    coarse, fine = np.asarray(apply(params, field(32))), np.asarray(apply(params, field(64)))
    np.testing.assert_allclose(fine[::2, ::2], coarse, atol=1e-5)
    assert np.abs(coarse).max() > 0.1


def test_spectral_conv_rejects_too_many_modes():
    layer = SpectralConv(out_channels=1, modes=9)
    with pytest.raises(ValueError, match="modes=9"):
        layer.init(jax.random.key(0), jnp.ones((16, 16, 1)))


def test_fno_jit_and_grad():
    x = jax.random.normal(jax.random.key(0), (2, 16, 16, 2))
    model = _fno(2)
    params = jax.jit(model.init)(jax.random.key(1), x)

    @jax.jit
    def loss(p):
        return jnp.mean(model.apply(p, x) ** 2)

    grads = jax.grad(loss)(params)
    leaves = jax.tree_util.tree_leaves(grads)
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in leaves)
    spectral = grads["params"]["spectral_0"]["w_pos_real"]
    assert float(jnp.max(jnp.abs(spectral))) > 0.0


def test_fno_zero_init_output_is_zero():
    x = jax.random.normal(jax.random.key(0), (16, 16, 2))
    model = FNO(out_channels=2, modes=4, width=8, zero_init_output=True)
    params = jax.jit(model.init)(jax.random.key(1), x)
    np.testing.assert_array_equal(jax.jit(model.apply)(params, x), 0.0)
