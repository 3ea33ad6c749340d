"""3D-FLEG's networks (Flax Linen): point encoder, geometric encoder and embedding projector.

    model = FlegNet(variant="fleg3d", widths=(64, 128, 256), geo_widths=(128,), text_dim=384)
    params = model.init(key, points, desc)       # points (B, N, 3), desc (B, DIM)
    out = model.apply(params, points, desc)      # {"z": (B, 384), "e": (B, 384)}

Pieces (our design; the paper's architecture is not public):
* `PointNet`: a shared per-point MLP (Dense + LayerNorm + ReLU per width), then max
  (`max_pool`) and mean pooling over the points concatenated -> f (B, 2·widths[-1]);
  invariant to point order.
* point head h: MLP f -> z in the text space (text_dim = 384, the MiniLM width).
* geometric encoder G (the learned half of the extraction module): MLP on the
  hand-made global descriptor D(x) of `lib.fleg3d.geometry` -> g (B, geo_widths[-1]).
* geometric embedding module P: MLP g -> e in the text space; it is what augments the
  class prompts (t'_c = normalise(t_c + ē_c), `lib.fleg3d.scoring`).

Variants (one module, so the ablations share every other line):
  fleg3d        z = h(f),        e = P(G(D))
  no_extraction z = h(f),        e = P(G(f))      (no hand-made geometry; the embedding
                                                   module sees the backbone feature)
  no_embedding  z = h([f, G(D)]), e = 0           (geometry fused into the point feature,
                                                   not projected onto the prompts)
  filp3d        z = h(f),        e = 0            (FILP-3D-like: text + prototypes only)
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax.numpy as jnp

from lib.nn.mlp import MLP

VARIANTS = ("fleg3d", "no_extraction", "no_embedding", "filp3d")


class PointNet(nn.Module):
    """(B, N, 3) -> (B, 2·widths[-1]) order-invariant global feature."""

    widths: Sequence[int]

    @nn.compact
    def __call__(self, points):
        h = points
        for w in self.widths:
            h = nn.relu(nn.LayerNorm()(nn.Dense(w)(h)))
        return jnp.concatenate([max_pool(h), h.mean(axis=-2)], axis=-1)


def max_pool(h):
    """(..., N, C) -> (..., C) max over the points, its gradient routed to the first argmax.

    Same value as `h.max(-2)`, and the same gradient except at ties (all of it to the first
    maximiser instead of split; after the ReLU the only ties are at 0, where the ReLU's
    gradient is 0 either way). Written as a gather because the gradient of `max` finds the
    maximisers by comparing h with the max for equality: with XLA's backend optimisation off
    (`tests.fast_compile`) the two can be computed in different fusions and differ in the
    last bit, no element matches, and the gradient is 0/0 = NaN.
    """
    idx = jnp.argmax(h, axis=-2, keepdims=True)
    return jnp.take_along_axis(h, idx, axis=-2)[..., 0, :]


class FlegNet(nn.Module):
    """points (B, N, 3), desc (B, DIM) -> {"z": (B, text_dim), "e": (B, text_dim)}."""

    variant: str
    widths: Sequence[int]
    geo_widths: Sequence[int]
    text_dim: int = 384

    @nn.compact
    def __call__(self, points, desc):
        if self.variant not in VARIANTS:
            raise ValueError(f"variant = {self.variant!r} is not one of {VARIANTS}")
        f = PointNet(self.widths, name="point_encoder")(points)
        head = MLP((self.widths[-1],), self.text_dim, name="point_head")
        geo = MLP(tuple(self.geo_widths[:-1]), self.geo_widths[-1], name="geo_encoder")
        embed = MLP((self.geo_widths[-1],), self.text_dim, out_scale=0.5, name="geo_embedding")
        zeros = jnp.zeros(f.shape[:-1] + (self.text_dim,), f.dtype)
        if self.variant == "fleg3d":
            return {"z": head(f), "e": embed(nn.relu(geo(desc)))}
        if self.variant == "no_extraction":
            return {"z": head(f), "e": embed(nn.relu(geo(f)))}
        if self.variant == "no_embedding":
            return {"z": head(jnp.concatenate([f, nn.relu(geo(desc))], -1)), "e": zeros}
        return {"z": head(f), "e": zeros}
