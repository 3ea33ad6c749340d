"""A small 2-D UNet with periodic ('CIRCULAR') padding, in Linen.

Fields are channels-last `(..., H, W, C)` with axis H = y and axis W = x. Each level is two
3×3 circular convolutions with GELU; going down halves H and W by 2×2 average pooling,
going up doubles them by nearest-neighbour repetition, and skip connections concatenate
the encoder features. Every operation commutes with translations by multiples of
`2 ** (len(features) - 1)` cells, so the network does too.
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

Array = jax.Array


class _DoubleConv(nn.Module):
    """Two 3×3 circular convolutions, each followed by GELU: `(..., H, W, C) -> (..., H, W, features)`."""

    features: int

    @nn.compact
    def __call__(self, x: Array) -> Array:
        for _ in range(2):
            x = nn.gelu(nn.Conv(self.features, (3, 3), padding="CIRCULAR")(x))
        return x


def _pool(x: Array) -> Array:
    """2×2 average pooling over (H, W): `(..., H, W, C) -> (..., H/2, W/2, C)`."""
    *lead, h, w, c = x.shape
    return x.reshape(*lead, h // 2, 2, w // 2, 2, c).mean(axis=(-4, -2))


def _upsample(x: Array) -> Array:
    """Nearest-neighbour ×2 upsampling over (H, W): `(..., H, W, C) -> (..., 2H, 2W, C)`."""
    return jnp.repeat(jnp.repeat(x, 2, axis=-3), 2, axis=-2)


class UNet(nn.Module):
    """Periodic 2-D UNet.

    Attributes:
      out_channels: output channels.
      features: channels per level, finest first, e.g. `(16, 32, 64)`; there are
        `len(features) - 1` down-samplings, so H and W must be divisible by
        `2 ** (len(features) - 1)`.
      zero_init_output: start the last 1×1 convolution at zero, so the network outputs 0 at
        init (used for residual corrections that should start as the identity).
    """

    out_channels: int
    features: Sequence[int] = (16, 32, 64)
    zero_init_output: bool = False

    @nn.compact
    def __call__(self, x: Array) -> Array:
        """Map `(..., H, W, C_in)` to `(..., H, W, out_channels)`."""
        factor = 2 ** (len(self.features) - 1)
        h, w = x.shape[-3:-1]
        if h % factor or w % factor:
            raise ValueError(
                f"UNet with {len(self.features)} levels needs H and W divisible by {factor}; got {(h, w)}"
            )
        skips = []
        for f in self.features[:-1]:
            x = _DoubleConv(f)(x)
            skips.append(x)
            x = _pool(x)
        x = _DoubleConv(self.features[-1])(x)
        for f, skip in zip(reversed(self.features[:-1]), reversed(skips)):
            x = _DoubleConv(f)(jnp.concatenate([_upsample(x), skip], axis=-1))
        out_init = nn.initializers.zeros if self.zero_init_output else nn.linear.default_kernel_init
        return nn.Conv(self.out_channels, (1, 1), kernel_init=out_init)(x)
