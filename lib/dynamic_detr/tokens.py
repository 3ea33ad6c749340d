"""Token selection and aggregation with static shapes (the paper's Sec. 3, our design).

The paper's code and formulas are not public; this is the design written in
experiments/dynamic_detr/README.md. All functions take a batch of `K_in` current tokens
and return `K_out` (static) kept tokens, so they run under `jit`:

* `level_quota` — per-level keep counts for one encoder block. `"mass"` (dynamic density
  control): level l gets a share of the block budget proportional to its importance mass
  Σ_{i∈l} σ(s_i) (Eq. D1 of the README), capped by the level's token count; `"count"`: the
  same ratio at every level; `"fixed"`: fixed per-level weights (Focus-DETR-like).
  `"global"`: no quota (plain top-k, Sparse-DETR-like).
* `select` — keep indices: tokens within their level's quota first, the rest of the budget
  filled by global score (`lax.top_k` over a priority, so the count is static).
* `merge_matrix` — the (K_in, K_out) aggregation matrix M: a kept token maps to its own
  slot; a dropped token of a level in mode `"proximal"` maps (hard) to the spatially
  nearest kept token of its level (Eq. D2); in mode `"context"` (holistic aggregation,
  Eq. D3) it maps (hard) to its level's context slot, one extra output slot per context
  level after the K_sel kept ones (K_out = K_sel + #context levels), which pools all the
  level's dropped tokens across the whole map; in mode `"holistic"`
  (`sparse.holistic = "kept"`) it is spread (soft, rows summing to 1) over all kept
  tokens of its level by feature similarity (Eq. D3'); in mode `"drop"` its row is zero
  (discarded, as in Sparse DETR / Focus-DETR).
* `aggregate` — size-weighted merge x' = Mᵀ(s⊙x) / Mᵀs, s' = Mᵀs (ToMe-style token
  sizes). With rows of M summing to 1 the total size Σs is conserved.

`merge_matrix` + `aggregate` are the dense reference (tested). The encoder uses
`merge_tokens`, the same computation without the dense (K_in, K_out) matrix products for
hard (kept / proximal) rows: those are scatter-adds, and the soft holistic part is computed
only for the rows that can be holistic (a static slice at the first block, where tokens
are still in level order), so XLA's FLOP count reflects the method's real cost.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

MODES = ("drop", "proximal", "holistic", "context")
ALLOCATIONS = ("global", "mass", "count", "fixed")


def context_levels(modes: tuple[str, ...]) -> tuple[int, ...]:
    """The levels in mode "context", in order: context slot j pools level context_levels[j]."""
    return tuple(l for l, m in enumerate(modes) if m == "context")


def _context_slot(level, modes, k_sel: int):
    """Output slot (B, K_in) of each token's level context slot (k_sel + j), k_sel for
    levels without one (only read where the level is in mode "context")."""
    ctx = context_levels(modes)
    table = jnp.asarray([k_sel + ctx.index(l) if l in ctx else k_sel for l in range(len(modes))])
    return table[level]


def level_quota(prob, level, valid, k: int, num_levels: int, allocation: str,
                level_weights=None):
    """Per-level keep counts (B, L) int32 summing to at most k.

    prob (B, K_in) importance in [0, 1]; level (B, K_in) int; valid (B, K_in) bool (tokens
    still alive); level_weights (L,) for "fixed".
    """
    onehot = jax.nn.one_hot(level, num_levels) * valid[..., None]          # (B, K, L)
    count = onehot.sum(1)                                                  # (B, L)
    if allocation == "global":
        return jnp.zeros_like(count, jnp.int32)
    if allocation == "mass":
        share = jnp.einsum("bk,bkl->bl", prob, onehot) + 1e-6
    elif allocation == "count":
        share = count
    elif allocation == "fixed":
        share = count * jnp.asarray(level_weights, prob.dtype)
    else:
        raise ValueError(f"unknown allocation {allocation!r}; expected one of {ALLOCATIONS}")
    share = share / share.sum(-1, keepdims=True)
    return jnp.minimum(jnp.floor(share * k), count).astype(jnp.int32)


def rank_in_level(score, level):
    """Rank (0 = best) of each token among the tokens of its level by descending score."""
    b, n = score.shape
    order = jnp.argsort(level * 4.0 - jax.nn.sigmoid(score), axis=-1)      # by level, then score
    sorted_level = jnp.take_along_axis(level, order, -1)
    pos = jnp.broadcast_to(jnp.arange(n), (b, n))
    first = jax.vmap(lambda sl: jnp.searchsorted(sl, sl, side="left"))(sorted_level)
    rank_sorted = pos - first
    return jnp.zeros_like(level).at[jnp.arange(b)[:, None], order].set(rank_sorted)


def select(score, level, valid, quota, k: int):
    """Indices (B, k) of kept tokens: within-quota tokens first, then by score.

    score (B, K_in) logits, level (B, K_in), valid (B, K_in) bool, quota (B, L).
    """
    in_quota = rank_in_level(jnp.where(valid, score, -1e4), level) < jnp.take_along_axis(
        quota, level, -1)
    priority = jax.nn.sigmoid(score) + 2.0 * in_quota + jnp.where(valid, 0.0, -10.0)
    _, idx = jax.lax.top_k(priority, k)
    return idx


def merge_matrix(idx, level, centre, feat, modes: tuple[str, ...], valid, temperature: float = 0.1):
    """Aggregation matrix M (B, K_in, K_out) for kept indices idx (B, K_out).

    level (B, K_in) int, centre (B, K_in, 2) token centres in [0, 1], feat (B, K_in, D)
    features for holistic similarity, modes: one mode per level (see module docstring),
    valid (B, K_in) bool (invalid rows are zero).
    """
    b, k_in = level.shape
    k_sel = idx.shape[1]
    k_out = k_sel + len(context_levels(modes))
    bi = jnp.arange(b)[:, None]
    kept = jnp.zeros((b, k_in), bool).at[bi, idx].set(True)
    slot = jnp.zeros((b, k_in), jnp.int32).at[bi, idx].set(jnp.arange(k_sel, dtype=jnp.int32))
    own = jax.nn.one_hot(slot, k_out) * kept[..., None]

    k_level = jnp.take_along_axis(level, idx, -1)                         # (B, K_out)
    same = level[..., None] == k_level[:, None, :]                         # (B, K_in, K_out)
    has_same = same.any(-1, keepdims=True)
    allowed = jnp.where(has_same, same, True)                              # fall back to any level
    k_centre = jnp.take_along_axis(centre, idx[..., None], 1)
    d2 = ((centre[:, :, None, :] - k_centre[:, None, :, :]) ** 2).sum(-1)
    proximal = jax.nn.one_hot(jnp.argmin(jnp.where(allowed, d2, jnp.inf), -1), k_out)
    f = feat / (jnp.linalg.norm(feat, axis=-1, keepdims=True) + 1e-6)
    k_f = jnp.take_along_axis(f, idx[..., None], 1)
    sim = jnp.einsum("bid,bkd->bik", f, k_f) / temperature
    holistic = jax.nn.softmax(jnp.where(allowed, sim, -1e9), -1)
    holistic = jnp.pad(holistic, ((0, 0), (0, 0), (0, k_out - k_sel)))
    context = jax.nn.one_hot(_context_slot(level, modes, k_sel), k_out)

    mode_id = jnp.asarray([MODES.index(m) for m in modes])[level]          # (B, K_in)
    dropped_row = jnp.where((mode_id == 1)[..., None], proximal,
                            jnp.where((mode_id == 2)[..., None], holistic,
                                      jnp.where((mode_id == 3)[..., None], context, 0.0)))
    m = jnp.where(kept[..., None], own, dropped_row)
    return m * valid[..., None]


def aggregate(m, x, size):
    """Size-weighted merge. m (B, K_in, K_out), x (B, K_in, D), size (B, K_in) ->
    (x' (B, K_out, D), size' (B, K_out)); Eq. D4 of the README."""
    new_size = jnp.einsum("bik,bi->bk", m, size)
    num = jnp.einsum("bik,bi,bid->bkd", m, size, x)
    return num / jnp.maximum(new_size, 1e-9)[..., None], new_size


def hard_map(m):
    """Each input token's destination slot (argmax of its row), -1 for dropped tokens."""
    return jnp.where(m.sum(-1) > 0, jnp.argmax(m, -1), -1).astype(jnp.int32)


def compose_pointer(ptr, hmap):
    """Pointers from original tokens to current slots through one more merge step."""
    nxt = jnp.take_along_axis(hmap, jnp.maximum(ptr, 0), -1)
    return jnp.where(ptr >= 0, nxt, -1)


def merge_tokens(idx, level, centre, x, size, modes: tuple[str, ...], temperature: float = 0.1,
                 holistic_rows: tuple[int, int] | None = None):
    """`aggregate(merge_matrix(...), x, size)` plus `hard_map`, without dense matmuls for
    hard rows. holistic_rows: a static row range that holds every token of the "holistic"
    levels (None: all rows). K_out = K_sel (= idx.shape[1]) + one context slot per
    "context" level. Returns (x' (B, K_out, D), size' (B, K_out), hmap (B, K_in))."""
    b, k_in = level.shape
    k_sel = idx.shape[1]
    k_out = k_sel + len(context_levels(modes))
    bi = jnp.arange(b)[:, None]
    kept = jnp.zeros((b, k_in), bool).at[bi, idx].set(True)
    slot = jnp.zeros((b, k_in), jnp.int32).at[bi, idx].set(jnp.arange(k_sel, dtype=jnp.int32))
    k_level = jnp.take_along_axis(level, idx, -1)
    mode_id = jnp.asarray([MODES.index(m) for m in modes])[level]
    hard = kept | (mode_id == 1) | (mode_id == 3)
    dest = jnp.where(kept | (mode_id != 3), slot, _context_slot(level, modes, k_sel))
    if "proximal" in modes:
        same = level[..., None] == k_level[:, None, :]
        allowed = jnp.where(same.any(-1, keepdims=True), same, True)
        k_centre = jnp.take_along_axis(centre, idx[..., None], 1)
        d2 = ((centre[:, :, None, :] - k_centre[:, None, :, :]) ** 2).sum(-1)
        dest = jnp.where(kept | (mode_id != 1), dest, jnp.argmin(jnp.where(allowed, d2, jnp.inf), -1))
    w = (size * hard)[..., None]
    num = jnp.zeros((b, k_out, x.shape[-1]), x.dtype).at[bi, dest].add(w * x)
    new_size = jnp.zeros((b, k_out), x.dtype).at[bi, dest].add(size * hard)
    hmap = jnp.where(hard, dest, -1)
    if "holistic" in modes:
        lo, hi = holistic_rows if holistic_rows is not None else (0, k_in)
        soft = (~kept & (mode_id == 2))[:, lo:hi]
        lv = level[:, lo:hi]
        same = lv[..., None] == k_level[:, None, :]
        allowed = jnp.where(same.any(-1, keepdims=True), same, True)
        f = x[:, lo:hi] / (jnp.linalg.norm(x[:, lo:hi], axis=-1, keepdims=True) + 1e-6)
        kx = jnp.take_along_axis(x, idx[..., None], 1)
        kf = kx / (jnp.linalg.norm(kx, axis=-1, keepdims=True) + 1e-6)
        p = jax.nn.softmax(jnp.where(allowed, jnp.einsum("bid,bkd->bik", f, kf) / temperature, -1e9), -1)
        p = jnp.pad(p * (soft * size[:, lo:hi])[..., None], ((0, 0), (0, 0), (0, k_out - k_sel)))
        num = num + jnp.einsum("bik,bid->bkd", p, x[:, lo:hi])
        new_size = new_size + p.sum(1)
        hmap = hmap.at[:, lo:hi].set(jnp.where(soft, jnp.argmax(p, -1), hmap[:, lo:hi]))
    return num / jnp.maximum(new_size, 1e-9)[..., None], new_size, hmap.astype(jnp.int32)


def slot_mean(values, hmap, size, k_out: int):
    """Size-weighted mean of `values` (B, K_in, ...) over the input tokens whose hard
    destination `hmap` (B, K_in; -1 = none) is each output slot -> (B, K_out, ...); 0 for
    an empty slot. Gives a context slot its position embedding, centre and carried score."""
    b = hmap.shape[0]
    w = size * (hmap >= 0)
    wv = w.reshape(w.shape + (1,) * (values.ndim - 2))
    dest = jnp.maximum(hmap, 0)
    bi = jnp.arange(b)[:, None]
    num = jnp.zeros((b, k_out) + values.shape[2:], values.dtype).at[bi, dest].add(wv * values)
    den = jnp.zeros((b, k_out), values.dtype).at[bi, dest].add(w)
    return num / jnp.maximum(den, 1e-9).reshape(den.shape + (1,) * (values.ndim - 2))
