"""GMFlow networks (Flax Linen): an MLP denoiser with a GM velocity head, and a small classifier.

`GMFlowMLP` maps (x_t (B, G, C), t (B,), labels (B,) or None) to the velocity GM of
`mixture.GM` (paper Eq. 4). Inputs: a sinusoidal embedding of 1000·t; for 2-D points a sin-cos
coordinate embedding (periods 5e-3 … 50, as the toy model of the paper), otherwise the raw
values; for class-conditional models a learned class embedding with one extra "null" class
(index num_classes) for classifier-free / probabilistic guidance. Heads (App. B.1):
  means   Dense(K·G·C) from the trunk features,
  logits  Dense(K·G), zero-initialised (uniform weights at init),
  logstd  a 2-layer MLP on the (t, class) embedding only, last layer zero-initialised (s = 1).
K = 1 with the L2 loss is the flow-matching baseline (the same network).
"""
from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.gmflow.mixture import GM, make_gm

Array = jax.Array


def sinusoidal_embedding(x: Array, dim: int, min_period: float, max_period: float) -> Array:
    """(..., ) -> (..., dim): sin and cos at dim/2 geometrically spaced periods."""
    half = dim // 2
    periods = jnp.exp(jnp.linspace(math.log(min_period), math.log(max_period), half))
    arg = 2 * math.pi * x[..., None] / periods
    return jnp.concatenate([jnp.sin(arg), jnp.cos(arg)], axis=-1)


class GMFlowMLP(nn.Module):
    """MLP GMFlow denoiser. Attributes:
      groups, channels: the point layout (G, C); K = num_components.
      width, depth: trunk size (depth hidden SiLU layers).
      num_classes: 0 for unconditional; else labels in [0, num_classes] (num_classes = null).
      coord_embed_dim: > 0 embeds each coordinate with sin-cos features (2-D toys); 0 = raw.
    """

    groups: int
    channels: int
    num_components: int
    width: int = 256
    depth: int = 3
    num_classes: int = 0
    t_embed_dim: int = 128
    coord_embed_dim: int = 0

    @nn.compact
    def __call__(self, x: Array, t: Array, labels: Array | None = None) -> GM:
        b = x.shape[0]
        t = jnp.broadcast_to(jnp.asarray(t, x.dtype), (b,))
        cond = sinusoidal_embedding(1000.0 * t, self.t_embed_dim, 1.0, 10000.0)
        cond = nn.silu(nn.Dense(self.width)(cond))
        if self.num_classes:
            if labels is None:
                raise ValueError("a class-conditional GMFlowMLP needs labels")
            cond = cond + nn.Embed(self.num_classes + 1, self.width)(labels)
        flat = x.reshape(b, -1)
        if self.coord_embed_dim:
            flat = sinusoidal_embedding(flat, self.coord_embed_dim, 5e-3, 50.0).reshape(b, -1)
        h = nn.Dense(self.width)(flat) + nn.Dense(self.width)(cond)
        for _ in range(self.depth):
            h = nn.Dense(self.width)(nn.silu(h))
        h = nn.silu(h)
        k, g, c = self.num_components, self.groups, self.channels
        means = nn.Dense(k * g * c)(h).reshape(b, k, g, c)
        logits = nn.Dense(k * g, kernel_init=nn.initializers.zeros)(h).reshape(b, k, g)
        s = nn.silu(nn.Dense(self.width)(cond))
        logstd = nn.Dense(1, kernel_init=nn.initializers.zeros)(s)[:, 0]
        return make_gm(means, logits, logstd)


class Classifier(nn.Module):
    """A small MLP image classifier; `features` returns the penultimate layer (for the
    Fréchet distance and k-NN precision/recall), `__call__` the logits."""

    num_classes: int = 10
    width: int = 256
    feature_dim: int = 64

    def setup(self):
        self.hidden = nn.Dense(self.width)
        self.feat = nn.Dense(self.feature_dim)
        self.out = nn.Dense(self.num_classes)

    def features(self, images: Array) -> Array:
        x = images.reshape(images.shape[0], -1)
        return nn.silu(self.feat(nn.silu(self.hidden(x))))

    def __call__(self, images: Array) -> Array:
        return self.out(self.features(images))
