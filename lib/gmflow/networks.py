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


class _FiLMResBlock(nn.Module):
    """GroupNorm → SiLU → conv3×3, + Dense(cond) per channel, GroupNorm → SiLU → conv3×3,
    plus an identity or 1×1 shortcut: (B, H, W, C_in), (B, E) -> (B, H, W, features)."""

    features: int

    @nn.compact
    def __call__(self, x: Array, cond: Array) -> Array:
        groups = lambda c: math.gcd(8, c)
        h = nn.Conv(self.features, (3, 3), padding="SAME")(
            nn.silu(nn.GroupNorm(num_groups=groups(x.shape[-1]))(x)))
        h = h + nn.Dense(self.features)(nn.silu(cond))[:, None, None, :]
        h = nn.Conv(self.features, (3, 3), padding="SAME")(
            nn.silu(nn.GroupNorm(num_groups=groups(self.features))(h)))
        if x.shape[-1] != self.features:
            x = nn.Conv(self.features, (1, 1))(x)
        return x + h


class GMFlowUNet(nn.Module):
    """Convolutional GMFlow denoiser for images: a time- and class-conditioned UNet with the
    pixel-wise GM head of the paper's GM-DiT (App. B.1), in place of its transformer.

    Input x_t (B, G = H·W, C) in the `mixture.GM` layout (row-major pixels), t (B,), labels
    (B,) or None. The conditioning vector (sinusoidal embedding of 1000·t, plus a learned class
    embedding with a null class at index num_classes) enters every residual block as a
    per-channel shift (FiLM). Levels: one `_FiLMResBlock` per entry of `features` on the way
    down (2×2 average pooling between levels, so H and W must be divisible by
    2^(len(features) − 1)), one in the bottleneck, and one per level on the way up
    (nearest-neighbour ×2 upsampling, concatenated skip). Zero ("SAME") padding: images are
    not periodic, unlike `lib.nn.unet.UNet`. Heads (a 1×1 convolution on the last features):
      means   K·C per pixel -> (B, K, G, C),
      logits  K per pixel, zero-initialised -> (B, K, G) (uniform weights at init),
      logstd  a 2-layer MLP on the conditioning vector, last layer zero-initialised (s = 1).
    K = 1 with the L2 loss is the convolutional flow-matching baseline.
    """

    height: int
    width: int
    channels: int
    num_components: int
    features: tuple[int, ...] = (32, 64)
    num_classes: int = 0
    t_embed_dim: int = 128
    cond_dim: int = 128

    @nn.compact
    def __call__(self, x: Array, t: Array, labels: Array | None = None) -> GM:
        b = x.shape[0]
        hh, ww, c, k = self.height, self.width, self.channels, self.num_components
        if x.shape[1:] != (hh * ww, c):
            raise ValueError(f"GMFlowUNet expects x of shape (B, {hh * ww}, {c}), got {x.shape}")
        factor = 2 ** (len(self.features) - 1)
        if hh % factor or ww % factor:
            raise ValueError(f"GMFlowUNet with {len(self.features)} levels needs H and W "
                             f"divisible by {factor}; got {(hh, ww)}")
        t = jnp.broadcast_to(jnp.asarray(t, x.dtype), (b,))
        cond = sinusoidal_embedding(1000.0 * t, self.t_embed_dim, 1.0, 10000.0)
        cond = nn.Dense(self.cond_dim)(nn.silu(nn.Dense(self.cond_dim)(cond)))
        if self.num_classes:
            if labels is None:
                raise ValueError("a class-conditional GMFlowUNet needs labels")
            cond = cond + nn.Embed(self.num_classes + 1, self.cond_dim)(labels)
        h = nn.Conv(self.features[0], (3, 3), padding="SAME")(x.reshape(b, hh, ww, c))
        skips = []
        for i, f in enumerate(self.features):
            h = _FiLMResBlock(f)(h, cond)
            skips.append(h)
            if i < len(self.features) - 1:
                h = h.reshape(b, h.shape[1] // 2, 2, h.shape[2] // 2, 2, f).mean(axis=(2, 4))
        h = _FiLMResBlock(self.features[-1])(h, cond)
        for i, f in reversed(list(enumerate(self.features))):
            if i < len(self.features) - 1:
                h = jnp.repeat(jnp.repeat(h, 2, axis=1), 2, axis=2)
            h = _FiLMResBlock(f)(jnp.concatenate([h, skips[i]], axis=-1), cond)
        h = nn.silu(nn.GroupNorm(num_groups=math.gcd(8, self.features[0]))(h))
        means = nn.Conv(k * c, (1, 1))(h).reshape(b, hh * ww, k, c).transpose(0, 2, 1, 3)
        logits = nn.Conv(k, (1, 1), kernel_init=nn.initializers.zeros)(h)
        logits = logits.reshape(b, hh * ww, k).transpose(0, 2, 1)
        s = nn.silu(nn.Dense(self.cond_dim)(nn.silu(cond)))
        logstd = nn.Dense(1, kernel_init=nn.initializers.zeros)(s)[:, 0]
        return make_gm(means, logits, logstd)
