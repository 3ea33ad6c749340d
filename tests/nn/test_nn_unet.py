"""Periodic UNet: shapes, translation equivariance by multiples of 2**levels, bad grids."""
import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.nn import UNet


def test_unet_output_shape():
    x = jax.random.normal(jax.random.key(0), (2, 16, 24, 3))
    model = UNet(out_channels=2, features=(4, 8, 8))
    params = jax.jit(model.init)(jax.random.key(1), x)
    chex.assert_shape(jax.jit(model.apply)(params, x), (2, 16, 24, 2))


def test_unet_translation_equivariance():
    x = jax.random.normal(jax.random.key(0), (16, 16, 2))
    model = UNet(out_channels=2, features=(4, 8, 8))  # 2 poolings -> equivariant to shifts by 4
    params = jax.jit(model.init)(jax.random.key(1), x)
    apply = jax.jit(model.apply)                       # one program for the three inputs
    out = np.asarray(apply(params, x))
    shift = (4, -8)
    np.testing.assert_allclose(
        apply(params, np.roll(x, shift, axis=(0, 1))), np.roll(out, shift, axis=(0, 1)), atol=1e-5
    )
    # a shift by one cell is not a symmetry of the pooling: the check above can fail
    off = np.asarray(apply(params, np.roll(x, 1, axis=0))) - np.roll(out, 1, axis=0)
    assert np.abs(off).max() > 1e-4


def test_unet_rejects_indivisible_grid():
    model = UNet(out_channels=1, features=(4, 8, 8))
    with pytest.raises(ValueError, match="divisible by 4"):
        model.init(jax.random.key(0), jnp.ones((18, 16, 1)))
