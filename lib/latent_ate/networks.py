"""The pre-trained networks of `lib.latent_ate.features` (Flax Linen)."""
from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn


class ConvNet(nn.Module):
    """Conv(c)-ReLU-AvgPool2 blocks, Dense(latent)-ReLU, Dense(classes).

    (B, H, W, C) -> (logits (B, classes), latent (B, latent_dim)).
    """
    channels: Sequence[int] = (16, 32)
    latent_dim: int = 64
    num_classes: int = 10

    @nn.compact
    def __call__(self, x):
        for c in self.channels:
            x = nn.relu(nn.Conv(c, (3, 3))(x))
            x = nn.avg_pool(x, (2, 2), strides=(2, 2), padding="SAME")
        z = nn.relu(nn.Dense(self.latent_dim)(x.reshape(x.shape[0], -1)))
        return nn.Dense(self.num_classes)(z), z


class Autoencoder(nn.Module):
    """MLP autoencoder with a linear bottleneck: (B, D) -> (reconstruction (B, D), code (B, k))."""
    hidden: Sequence[int]
    latent_dim: int
    out_dim: int

    @nn.compact
    def __call__(self, x):
        h = x
        for width in self.hidden:
            h = nn.relu(nn.Dense(width)(h))
        code = nn.Dense(self.latent_dim, name="code")(h)
        h = code
        for width in reversed(tuple(self.hidden)):
            h = nn.relu(nn.Dense(width)(h))
        return nn.Dense(self.out_dim)(h), code
