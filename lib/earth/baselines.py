"""Baselines with the same (init, apply) interface as `model.Earth`: x [W, N] -> [N].

persistence   ŷ = x[-1] (no parameters; `init` returns an empty dict)
linear_ar     ŷ_v = w · x[:, v] + b, one autoregression shared by the regions
gru           a GRU over each region's series (shared weights), linear read-out
gcn_gru       per step a graph convolution relu(W [x_t ‖ Ā x_t]) feeds a GRU; the last
              state is convolved once more (Ā h_T) and read out (a ColaGNN/STGCN-lite)
"""
from __future__ import annotations

import dataclasses

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

BASELINES = ("persistence", "linear_ar", "gru", "gcn_gru")


class _LinearAR(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(x.T)[:, 0]


class _GRU(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        h = nn.RNN(nn.GRUCell(self.hidden))(x.T[:, :, None])[:, -1]  # [N, d]
        return nn.Dense(1)(h)[:, 0]


class _GCNGRU(nn.Module):
    hidden: int
    geo: np.ndarray

    @nn.compact
    def __call__(self, x):
        a = jnp.asarray(self.geo, x.dtype)
        feats = jnp.stack([x, x @ a.T], -1)                            # [W, N, 2]
        g = nn.relu(nn.Dense(self.hidden)(feats)).transpose(1, 0, 2)   # [N, W, d]
        h = nn.RNN(nn.GRUCell(self.hidden))(g)[:, -1]                  # [N, d]
        h = jnp.concatenate([h, a @ h], -1)
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(h)))[:, 0]


@dataclasses.dataclass(frozen=True)
class Baseline:
    name: str
    geo: np.ndarray
    hidden: int = 16

    def __post_init__(self):
        if self.name not in BASELINES:
            raise ValueError(f"unknown baseline {self.name!r}; allowed: {BASELINES}")

    @property
    def trainable(self) -> bool:
        return self.name != "persistence"

    def _module(self):
        return {"linear_ar": lambda: _LinearAR(), "gru": lambda: _GRU(self.hidden),
                "gcn_gru": lambda: _GCNGRU(self.hidden, self.geo)}[self.name]()

    def init(self, key, x):
        if self.name == "persistence":
            return {}
        return self._module().init(key, x)

    def apply(self, params, x):
        if self.name == "persistence":
            return x[-1]
        return self._module().apply(params, x)
