"""Cross-attention fusion of the global trend with the local transmission states.

Query: the global latent z_T of each region; keys/values: the local transmission states
[s_T ‖ i_T ‖ r_T] of every region (one token per region), with the transmission graph
Â_T as a learned additive bias per head (so graph-adjacent regions are favoured):

    A_k = softmax_u( (z W_q^k)(l W_K^k)ᵀ / √d_k + λ_k Â_T ),   fused = z_T + W_o [A_k l W_V^k]_k .

The released `MultiViewFusion` attends, per region, over the views (s, i); attending over
regions lets the global trend of one region read the local transmission of the others,
which is what "global coherence guides local transmission" asks. Both are
permutation-equivariant in the regions when Â is permuted with them (tested).
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


class CrossAttentionFusion(nn.Module):
    """query [N, d], tokens [N, e], graph [N, N] -> fused [N, d]."""

    hidden: int
    heads: int = 4

    @nn.compact
    def __call__(self, query, tokens, graph):
        d, k = self.hidden, self.heads
        if d % k:
            raise ValueError(f"hidden size {d} is not divisible by {k} heads")
        n = query.shape[0]
        q = nn.Dense(d, name="q")(query).reshape(n, k, d // k)
        key = nn.Dense(d, name="k")(tokens).reshape(n, k, d // k)
        v = nn.Dense(d, name="v")(tokens).reshape(n, k, d // k)
        lam = self.param("graph_bias", nn.initializers.constant(1.0), (k,))
        logits = jnp.einsum("vhc,uhc->hvu", q, key) / jnp.sqrt(d // k) + lam[:, None, None] * graph
        att = jax.nn.softmax(logits, axis=-1)
        out = jnp.einsum("hvu,uhc->vhc", att, v).reshape(n, d)
        return query + nn.Dense(d, name="o")(out)


class LinearFusion(nn.Module):
    """The "w/o cross-attention" ablation: fused = z_T + W [s_T ‖ i_T ‖ r_T] (per region)."""

    hidden: int

    @nn.compact
    def __call__(self, query, tokens, graph):
        del graph
        return query + nn.Dense(self.hidden)(tokens)
