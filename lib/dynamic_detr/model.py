"""A small multi-scale DETR in Flax Linen with a sparsifiable encoder.

Shapes: images (B, S, S, 3); L backbone levels at strides 4·2^l give N = Σ_l (S/4/2^l)²
tokens of width D (level-major, row-major within a level); Q object queries; C classes.

* Backbone: strided 3×3 convolutions (one stage per level), 1×1 projections to D.
* Encoder (`Detector.encode`): pre-norm transformer blocks over the tokens kept by the
  variant's `EncoderSpec` (lib/dynamic_detr/spec.py), with proportional attention
  (log token size added to the keys' logits, so a merged token counts as many tokens).
  The decoder always sees all N positions: a kept token's memory is its own output; an
  aggregated token's memory is its backbone feature plus the updates of the kept token it
  was merged into (an "unmerge", Eq. D5 of the README; for a token pooled into a context
  slot, that slot's update); a dropped token keeps its backbone feature (as in Sparse DETR).
* Decoder: post-norm DETR decoder with learned reference points and iterative box
  refinement (Deformable DETR's convergence aid, with plain cross-attention), outputs of
  every layer returned for auxiliary losses.
"""
from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lib.dynamic_detr import tokens as tk
from lib.dynamic_detr.spec import EncoderSpec


def token_layout(image_size: int, num_levels: int):
    """Static token geometry: (level (N,), centre (N, 2) as (x, y) in [0, 1], parent (N,)
    index of the covering token one level coarser (itself at the top level), shapes)."""
    shapes = [image_size // (4 * 2 ** l) for l in range(num_levels)]
    if min(shapes) < 1 or any(s * 4 * 2 ** l != image_size for l, s in enumerate(shapes)):
        raise ValueError(f"image size {image_size} must be divisible by {4 * 2 ** (num_levels - 1)}")
    level, centre, parent, offsets = [], [], [], np.cumsum([0] + [s * s for s in shapes])
    for l, s in enumerate(shapes):
        yy, xx = np.mgrid[0:s, 0:s]
        level.append(np.full(s * s, l))
        centre.append(np.stack([(xx.ravel() + 0.5) / s, (yy.ravel() + 0.5) / s], -1))
        if l + 1 < num_levels:
            ps = shapes[l + 1]
            parent.append(offsets[l + 1] + (yy.ravel() // 2) * ps + xx.ravel() // 2)
        else:
            parent.append(offsets[l] + np.arange(s * s))
    return (np.concatenate(level).astype(np.int32), np.concatenate(centre).astype(np.float32),
            np.concatenate(parent).astype(np.int32), tuple(shapes))


def sine_embed(xy, dim: int, temperature: float = 20.0):
    """(..., 2) coordinates in [0, 1] -> (..., dim) sine/cosine features (dim % 4 == 0)."""
    f = dim // 4
    freqs = temperature ** (-jnp.arange(f) / f) * 2 * jnp.pi
    a = xy[..., :, None] * freqs                                            # (..., 2, f)
    return jnp.concatenate([jnp.sin(a), jnp.cos(a)], -1).reshape(xy.shape[:-1] + (dim,))


class Attention(nn.Module):
    dim: int
    heads: int

    @nn.compact
    def __call__(self, q, k, v, bias=None):
        """q (B, Tq, D), k/v (B, Tk, D), bias (B, Tk) added to the logits -> (B, Tq, D)."""
        h, dh = self.heads, self.dim // self.heads
        split = lambda t: t.reshape(t.shape[:2] + (h, dh))
        qq = split(nn.Dense(self.dim, name="q")(q))
        kk = split(nn.Dense(self.dim, name="k")(k))
        vv = split(nn.Dense(self.dim, name="v")(v))
        logits = jnp.einsum("bqhd,bkhd->bhqk", qq, kk) / np.sqrt(dh)
        if bias is not None:
            logits = logits + bias[:, None, None, :]
        out = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(logits, -1), vv)
        return nn.Dense(self.dim, name="o")(out.reshape(q.shape[:2] + (self.dim,)))


class EncoderBlock(nn.Module):
    dim: int
    heads: int
    mlp_ratio: int = 4

    @nn.compact
    def __call__(self, x, pos, log_size):
        h = nn.LayerNorm()(x)
        x = x + Attention(self.dim, self.heads)(h + pos, h + pos, h, log_size)
        h = nn.LayerNorm()(x)
        return x + nn.Dense(self.dim)(nn.gelu(nn.Dense(self.dim * self.mlp_ratio)(h)))


class DecoderLayer(nn.Module):
    dim: int
    heads: int
    mlp_ratio: int = 4

    @nn.compact
    def __call__(self, tgt, qpos, memory, mpos):
        t = tgt + qpos
        tgt = nn.LayerNorm()(tgt + Attention(self.dim, self.heads, name="self")(t, t, tgt))
        tgt = nn.LayerNorm()(tgt + Attention(self.dim, self.heads, name="cross")(
            tgt + qpos, memory + mpos, memory))
        ff = nn.Dense(self.dim)(nn.gelu(nn.Dense(self.dim * self.mlp_ratio)(tgt)))
        return nn.LayerNorm()(tgt + ff)


class Backbone(nn.Module):
    widths: tuple[int, ...]

    @nn.compact
    def __call__(self, images):
        x = nn.relu(nn.Conv(self.widths[0], (3, 3), strides=2)(images))     # stride 2
        feats = []
        for w in self.widths:
            x = nn.relu(nn.Conv(w, (3, 3), strides=2)(x))
            x = x + nn.relu(nn.Conv(w, (3, 3))(x))
            feats.append(x)
        return feats


def _inv_sigmoid(p):
    p = jnp.clip(p, 1e-4, 1 - 1e-4)
    return jnp.log(p / (1 - p))


class Detector(nn.Module):
    """Multi-scale DETR; `spec` picks the encoder variant (same parameters for all)."""
    image_size: int
    num_classes: int
    widths: tuple[int, ...] = (32, 48, 64)
    dim: int = 64
    heads: int = 4
    enc_layers: int = 3
    dec_layers: int = 3
    num_queries: int = 20
    spec: EncoderSpec = EncoderSpec()

    def setup(self):
        self.num_levels = len(self.widths)
        level, centre, parent, _ = token_layout(self.image_size, self.num_levels)
        self.level_np, self.centre_np, self.parent_np = level, centre, parent
        self.backbone = Backbone(self.widths)
        self.proj = [nn.Dense(self.dim, name=f"proj{l}") for l in range(self.num_levels)]
        self.level_embed = self.param("level_embed", nn.initializers.normal(0.02),
                                      (self.num_levels, self.dim))
        self.scorer = [nn.Dense(self.dim, name="scorer_h"), nn.Dense(1, name="scorer_o")]
        self.block_scorers = [nn.Dense(1, name=f"block_scorer{b}") for b in range(1, self.enc_layers)]
        self.blocks = [EncoderBlock(self.dim, self.heads, name=f"enc{b}") for b in range(self.enc_layers)]
        self.query_embed = self.param("query_embed", nn.initializers.normal(1.0),
                                      (self.num_queries, self.dim))
        self.ref_points = self.param("ref_points", nn.initializers.uniform(1.0), (self.num_queries, 2))
        self.qpos_mlp = [nn.Dense(self.dim, name="qpos0"), nn.Dense(self.dim, name="qpos1")]
        self.dec = [DecoderLayer(self.dim, self.heads, name=f"dec{l}") for l in range(self.dec_layers)]
        self.cls_head = nn.Dense(self.num_classes, name="cls",
                                 bias_init=nn.initializers.constant(-4.6))  # prior p = 0.01
        self.box_head = [nn.Dense(self.dim, name="box0"), nn.Dense(self.dim, name="box1"),
                         nn.Dense(4, name="box2", kernel_init=nn.initializers.zeros)]

    # ------------------------------------------------------------------ tokens
    def tokens(self, images):
        """Backbone tokens x0 (B, N, D) and their positional embedding (B, N, D)."""
        feats = self.backbone(images)
        b = images.shape[0]
        x0 = jnp.concatenate([self.proj[l](f).reshape(b, -1, self.dim) for l, f in enumerate(feats)], 1)
        pos = sine_embed(jnp.asarray(self.centre_np), self.dim) + self.level_embed[self.level_np]
        return x0, jnp.broadcast_to(pos, x0.shape)

    def score0(self, x0):
        """Objectness logits (B, N) of the backbone tokens (block-0 importance)."""
        return self.scorer[1](nn.gelu(self.scorer[0](x0)))[..., 0]

    # ------------------------------------------------------------------ encoder
    def encode(self, x0, pos):
        """The encoder of variant `spec`: x0, pos (B, N, D) -> dict(memory (B, N, D),
        scores [(logits (B, K_b), orig (B, K_b)) per block; orig -1 marks a context slot],
        tokens (B, K_L, D), ptr (B, N) final slot of each original token or -1, size (B, K_L))."""
        spec, b, n = self.spec, x0.shape[0], x0.shape[1]
        counts = spec.counts(n, self.enc_layers)
        score = self.score0(x0)
        if spec.topdown:
            score = self._topdown(score)
        lvl = jnp.broadcast_to(jnp.asarray(self.level_np), (b, n))
        ctr = jnp.broadcast_to(jnp.asarray(self.centre_np), (b, n, 2))
        orig = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32), (b, n))
        ptr, size, x, p = orig, jnp.ones((b, n), x0.dtype), x0, pos
        acc = jnp.zeros_like(x0)
        scores = [(score, orig)]
        for blk in range(self.enc_layers):
            if blk > 0:
                xn = (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + 1e-5)
                s_b = self.block_scorers[blk - 1](xn)[..., 0]
                scores.append((s_b, orig))
                if spec.rescore:
                    score = s_b
            k = counts[blk]
            if spec.method != "dense" and (blk == 0 or k < x.shape[1] or spec.rescore):
                # context slots (holistic aggregation) only where this block drops tokens;
                # they take their place in the block's budget k
                modes = (spec.modes if k < x.shape[1]
                         else tuple("drop" if md == "context" else md for md in spec.modes))
                ctx = tk.context_levels(modes)
                k_sel = k - len(ctx)
                if k_sel < 1:
                    raise ValueError(f"block {blk} keeps {k} tokens, too few for {len(ctx)} "
                                     "context slots and one kept token")
                valid = jnp.ones(lvl.shape, bool)
                quota = tk.level_quota(jax.nn.sigmoid(score), lvl, valid, k_sel, self.num_levels,
                                       spec.allocation, spec.level_weights or None)
                idx = tk.select(score, lvl, valid, quota, k_sel)
                rows = self._holistic_rows(modes) if blk == 0 else None
                x, new_size, hmap = tk.merge_tokens(idx, lvl, ctr, x, size, modes,
                                                    spec.temperature, rows)
                ptr = tk.compose_pointer(ptr, hmap)
                take = lambda t: jnp.take_along_axis(t, idx if t.ndim == 2 else idx[..., None], 1)
                if ctx:                   # context slots: members' mean position and score,
                    tail = lambda t: tk.slot_mean(t, hmap, size, k)[:, k_sel:]   # no origin
                    p, ctr, score = (jnp.concatenate([take(t), tail(t)], 1) for t in (p, ctr, score))
                    lvl = jnp.concatenate([take(lvl), jnp.broadcast_to(jnp.asarray(ctx, lvl.dtype),
                                                                       (b, len(ctx)))], 1)
                    orig = jnp.concatenate([take(orig), jnp.full((b, len(ctx)), -1, orig.dtype)], 1)
                else:
                    p, lvl, ctr, orig, score = take(p), take(lvl), take(ctr), take(orig), take(score)
                size = new_size
            # proportional attention; an empty context slot (size 0) gets no attention
            log_size = jnp.where(size > 0, jnp.log(jnp.maximum(size, 1e-30)), -jnp.inf)
            x_out = self.blocks[blk](x, p, log_size)
            if spec.method != "dense":
                at = jnp.maximum(ptr, 0)
                delta = jnp.take_along_axis(x_out - x, at[..., None], 1)
                gets = ptr >= 0
                if not spec.unmerge:      # only a token still in its own slot gets the update
                    gets = gets & (jnp.take_along_axis(orig, at, 1) == jnp.arange(n))
                acc = acc + delta * gets[..., None]
            x = x_out
        memory = x if spec.method == "dense" else x0 + acc
        return {"memory": memory, "scores": scores, "tokens": x, "ptr": ptr, "size": size}

    def _holistic_rows(self, modes):
        """Static row range covering every token of a holistic level in the original
        (level-major) layout, or None when no level is holistic."""
        hol = [l for l, md in enumerate(modes) if md == "holistic"]
        if not hol:
            return None
        rows = np.flatnonzero(np.isin(self.level_np, hol))
        return int(rows.min()), int(rows.max()) + 1

    def _topdown(self, score):
        """Focus-DETR-like top-down modulation: s'_i = s_i + σ(s'_parent(i)) below the top level."""
        parent = jnp.asarray(self.parent_np)
        below_top = jnp.asarray(self.level_np < self.num_levels - 1)
        out = score
        for _ in range(self.num_levels - 1):
            out = score + below_top * jax.nn.sigmoid(out[:, parent])
        return out

    # ------------------------------------------------------------------ decoder
    def decode(self, memory, pos):
        """memory, pos (B, N, D) -> logits (Ldec, B, Q, C), boxes (Ldec, B, Q, 4) cxcywh."""
        b = memory.shape[0]
        tgt = jnp.broadcast_to(self.query_embed, (b,) + self.query_embed.shape)
        ref = jnp.broadcast_to(jax.nn.sigmoid(_inv_sigmoid(self.ref_points)), (b, self.num_queries, 2))
        logits, boxes = [], []
        for layer in self.dec:
            qpos = self.qpos_mlp[1](nn.relu(self.qpos_mlp[0](sine_embed(ref, self.dim))))
            tgt = layer(tgt, qpos, memory, pos)
            d = self.box_head[2](nn.relu(self.box_head[1](nn.relu(self.box_head[0](tgt)))))
            box = jnp.concatenate([jax.nn.sigmoid(_inv_sigmoid(ref) + d[..., :2]),
                                   jax.nn.sigmoid(d[..., 2:] - 2.0)], -1)
            logits.append(self.cls_head(tgt))
            boxes.append(box)
            ref = jax.lax.stop_gradient(box[..., :2])
        return jnp.stack(logits), jnp.stack(boxes)

    def __call__(self, images):
        x0, pos = self.tokens(images)
        enc = self.encode(x0, pos)
        logits, boxes = self.decode(enc["memory"], pos)
        return {**enc, "logits": logits, "boxes": boxes, "x0": x0}
