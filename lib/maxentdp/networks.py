"""Small Flax Linen building blocks shared by the critics and both actors."""
from __future__ import annotations

from typing import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "relu": nn.relu,
    "mish": lambda x: x * jnp.tanh(nn.softplus(x)),
    "silu": nn.silu,
    "tanh": jnp.tanh,
}


class MLP(nn.Module):
    """x (..., d_in) -> (..., out): Dense layers of `hidden` widths with `activation`, then a
    linear Dense(out). `out=None` ends with the last hidden layer's activation."""

    hidden: Sequence[int]
    out: int | None
    activation: str = "relu"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.activation]
        for width in self.hidden:
            x = act(nn.Dense(width)(x))
        if self.out is not None:
            x = nn.Dense(self.out)(x)
        return x


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
