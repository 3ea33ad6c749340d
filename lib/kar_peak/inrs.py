"""Implicit neural representations behind one interface: `INR(kind, ...)(x) -> (..., out_dim)`.

kinds (x in [-1, 1]^d):
  relu      ReLU MLP on raw coordinates.
  relu_pe   ReLU MLP on the positional encoding (`levels` octaves).
  rff       ReLU MLP on fixed Gaussian random Fourier features (scale `sigma`).
  siren     sine MLP, sin(ω0 (Wx + b)), with the SIREN initialisation (Sitzmann et al. 2020).
  finer     FINER (Liu et al. 2024): sin(ω0 (|z| + 1) z), SIREN weights, first-layer bias
            drawn from U(−k, k) with k = `bias_scale` (wider frequency support).
  peak      ReLU MLP on the learnable PEAK encoding (`lib.kar_peak.encodings.PEAK`).
`depth` hidden layers of `width` units, then a linear output layer of `out_dim`.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.kar_peak.encodings import PEAK, FourierFeatures, positional_encoding

KINDS = ("relu", "relu_pe", "rff", "siren", "finer", "peak")


def _uniform(scale: float):
    def init(key, shape, dtype=jnp.float32):
        return jax.random.uniform(key, shape, dtype, -scale, scale)
    return init


class INR(nn.Module):
    kind: str
    width: int = 64
    depth: int = 3
    out_dim: int = 1
    levels: int = 8            # relu_pe
    features: int = 64         # rff, peak (number of frequencies)
    sigma: float = 10.0        # rff, peak (initial) frequency scale
    omega0: float = 30.0       # siren, finer
    bias_scale: float = 1.0    # finer first-layer bias range
    order: int = 1             # peak
    learn_frequencies: bool = True  # peak
    seed: int = 0              # fixed random features

    @nn.compact
    def __call__(self, x):
        if self.kind not in KINDS:
            raise ValueError(f"unknown INR kind {self.kind!r}; allowed: {KINDS}")
        if self.kind in ("siren", "finer"):
            return self._sine(x)
        if self.kind == "relu":
            h = x
        elif self.kind == "relu_pe":
            h = positional_encoding(x, self.levels)
        elif self.kind == "rff":
            h = FourierFeatures(self.features, self.sigma, self.seed)(x)
        else:
            h = PEAK(self.features, self.sigma, self.order, self.learn_frequencies, self.seed)(x)
        for _ in range(self.depth):
            h = nn.relu(nn.Dense(self.width)(h))
        return nn.Dense(self.out_dim)(h)

    def _sine(self, x):
        w0 = self.omega0

        def act(z):
            if self.kind == "finer":
                return jnp.sin(w0 * (jnp.abs(z) + 1.0) * z)
            return jnp.sin(w0 * z)

        d = x.shape[-1]
        first_bias = (_uniform(self.bias_scale) if self.kind == "finer"
                      else _uniform(1.0 / d))
        h = act(nn.Dense(self.width, kernel_init=_uniform(1.0 / d), bias_init=first_bias)(x))
        hidden = (6.0 / self.width) ** 0.5 / w0
        for _ in range(self.depth - 1):
            h = act(nn.Dense(self.width, kernel_init=_uniform(hidden),
                             bias_init=_uniform(1.0 / self.width ** 0.5))(h))
        return nn.Dense(self.out_dim, kernel_init=_uniform(hidden))(h)
