"""SketchDNN denoiser (notes A.4): a time-conditioned transformer over primitive slots.

    net = SketchDenoiser(num_steps=T, width=128, depth=4, heads=4)
    params = net.init(key, x_t, t)        # x_t (B, S, 21), t (B,) ints in 0..T
    raw = net.apply(params, x_t, t)       # (B, S, 21): flag logits, type logits, x̂₀ params

    input MLP     21 → 4·width → width (SiLU)
    time          learned embedding of t (T + 1 rows) → SiLU   (the official code's choice)
    blocks        `depth` × lib.nn.transformer.AdaLNBlock (full attention, adaLN, no mask)
    output        AdaLNFinal, then MLP width → 4·width → 21

No positional encoding by default, so permuting the slots of x_t permutes the output
(equivariance; the induced generative distribution is permutation-invariant).
`positional_encoding=True` (the ablation) adds a sinusoidal encoding of the slot index.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.nn.transformer import AdaLNBlock, AdaLNFinal
from lib.sketchdnn import sketch as sk


def sinusoidal(num: int, width: int) -> np.ndarray:
    """(num, width) sinusoidal encoding of positions 0..num−1 (Vaswani et al.)."""
    pos = np.arange(num)[:, None]
    freq = np.exp(-np.log(10000.0) * np.arange(0, width, 2) / width)[None]
    enc = np.zeros((num, width), np.float32)
    enc[:, 0::2] = np.sin(pos * freq)
    enc[:, 1::2] = np.cos(pos * freq)[:, : width // 2]
    return enc


class SketchDenoiser(nn.Module):
    num_steps: int
    width: int = 128
    depth: int = 4
    heads: int = 4
    mlp_ratio: int = 4
    positional_encoding: bool = False

    @nn.compact
    def __call__(self, x: jax.Array, t: jax.Array) -> jax.Array:
        if x.ndim != 3 or x.shape[-1] != sk.SLOT_DIM:
            raise ValueError(f"x must be (B, S, {sk.SLOT_DIM}), got {x.shape}")
        h = nn.Dense(self.mlp_ratio * self.width, name="in_1")(x)
        h = nn.Dense(self.width, name="in_2")(nn.silu(h))
        if self.positional_encoding:
            h = h + jnp.asarray(sinusoidal(x.shape[1], self.width))[None]
        c = nn.silu(nn.Embed(self.num_steps + 1, self.width, name="time")(t))
        for i in range(self.depth):
            h = AdaLNBlock(self.width, self.heads, self.mlp_ratio, name=f"block_{i}")(h, c)
        h = AdaLNFinal(name="final")(h, c)
        h = nn.Dense(self.mlp_ratio * self.width, name="out_1")(h)
        return nn.Dense(sk.SLOT_DIM, name="out_2")(nn.silu(h))
