"""Small Flax Linen building blocks shared by the critics and both actors."""
from __future__ import annotations


import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.nn.mlp import ACTIVATIONS, MLP  # noqa: F401  (the shared MLP; re-exported)


class FourierFeatures(nn.Module):
    """Learnable Fourier features of a scalar: s (...,) -> (..., 2·(dim//2)) =
    [cos(2π w s), sin(2π w s)] with trainable frequencies w ~ N(0, scale²)."""

    dim: int
    scale: float = 0.2

    @nn.compact
    def __call__(self, s: jax.Array) -> jax.Array:
        w = self.param("w", nn.initializers.normal(self.scale), (self.dim // 2,))
        arg = 2.0 * jnp.pi * s[..., None] * w
        return jnp.concatenate([jnp.cos(arg), jnp.sin(arg)], axis=-1)
