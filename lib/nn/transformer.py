"""A generic conditioned transformer block (Flax Linen): pre-LN, adaLN modulation.

    block = AdaLNBlock(width=128, heads=4)
    params = block.init(key, h, c)       # h (B, N, width) tokens, c (B, width) condition
    h = block.apply(params, h, c)        # (B, N, width)

Each block (DiT-style, as in SketchDNN's denoiser, notes A.4 of the generative papers):
    shift₁, scale₁, shift₂, scale₂ = Dense₀(c)            (zero-initialised: starts as a
                                                            plain pre-LN block)
    h ← h + Attn(LN(h)·(1 + scale₁) + shift₁)             full self-attention, no mask
    h ← h + MLP(LN(h)·(1 + scale₂) + shift₂)              width → mlp_ratio·width → width
LayerNorms carry no affine parameters (the modulation supplies them), there is no gate.
No positional information enters: the block is equivariant to permutations of the N tokens.
`AdaLNFinal` is the matching output modulation (LN, zero-initialised shift/scale).
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


def modulate(h: jax.Array, shift: jax.Array, scale: jax.Array) -> jax.Array:
    """h (B, N, W) * (1 + scale (B, W)) + shift (B, W)."""
    return h * (1 + scale[:, None, :]) + shift[:, None, :]


class AdaLNBlock(nn.Module):
    width: int
    heads: int
    mlp_ratio: int = 4

    @nn.compact
    def __call__(self, h: jax.Array, c: jax.Array) -> jax.Array:
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not divisible by heads {self.heads}")
        mod = nn.Dense(4 * self.width, kernel_init=nn.initializers.zeros, name="modulation")(c)
        sh1, sc1, sh2, sc2 = jnp.split(mod, 4, -1)
        ln = lambda name: nn.LayerNorm(use_scale=False, use_bias=False, name=name)
        a = modulate(ln("ln_attn")(h), sh1, sc1)
        h = h + nn.MultiHeadDotProductAttention(num_heads=self.heads, qkv_features=self.width,
                                                out_features=self.width, name="attn")(a)
        m = modulate(ln("ln_mlp")(h), sh2, sc2)
        m = nn.Dense(self.mlp_ratio * self.width, name="mlp_in")(m)
        h = h + nn.Dense(self.width, name="mlp_out")(nn.silu(m))
        return h


class AdaLNFinal(nn.Module):
    """LN(h)·(1 + scale) + shift with a zero-initialised modulation of c."""

    @nn.compact
    def __call__(self, h: jax.Array, c: jax.Array) -> jax.Array:
        width = h.shape[-1]
        shift, scale = jnp.split(nn.Dense(2 * width, kernel_init=nn.initializers.zeros,
                                          name="modulation")(c), 2, -1)
        return modulate(nn.LayerNorm(use_scale=False, use_bias=False)(h), shift, scale)
