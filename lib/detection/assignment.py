"""In-graph minimum-cost assignment (the Hungarian method), pure JAX with static shapes.

The DETR matcher (Carion et al. 2020, Eq. 1) assigns every valid ground-truth object a
distinct query so that the summed matching cost is minimal. `lib.detection.matching.assign`
does it on the host (scipy through `jax.pure_callback`); `assign_jax` here does it inside the
XLA program, so a train step that uses it has no host callback: it can be cached by JAX's
persistent compilation cache and needs no host/device round trip per step.

Algorithm: the shortest-augmenting-path form of the Hungarian method (Jonker & Volgenant
1987; the row-by-row potential form of Kuhn–Munkres). Rows are the M ground-truth slots,
columns the Q queries. Dual potentials u (rows) and v (columns) keep every reduced cost
c[i, j] - u[i] - v[j] >= 0 and are tight on the current matching. Rows are added one at a
time; for row i a Dijkstra search over reduced costs grows a tree of columns (each step adds
the cheapest unvisited column, O(Q)) until it reaches a free column, shifts the potentials by
the step lengths, and flips the matching along the path (`way` holds each column's
predecessor). After row i the matching of rows 0..i is optimal for those rows, so padding
rows can simply be skipped. A search for the k-th matched row visits at most k columns
before a free one, so the cost is O(M² Q) time and O(M Q) memory per matrix; every loop is
a `lax.while_loop` / `lax.fori_loop` with a static trip bound, so it traces once, and
`jax.vmap` batches it (a batched while loop runs until its slowest member stops).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _assign_one(cost, valid):
    """One matrix. cost (Q, M) float, valid (M,) bool -> (M,) int32 (query per row, -1 = none).

    Internally 1-based, with a dummy row 0 and dummy column 0 (the root of each search):
    a (M+1, Q+1) row-major costs, u (M+1,), v (Q+1,), p (Q+1,) row matched to each column
    (0 = free), way (Q+1,) predecessor column on the search tree.
    """
    q, m = cost.shape
    if m == 0:
        return jnp.zeros((0,), jnp.int32)
    dtype = jnp.promote_types(cost.dtype, jnp.float32)
    a = jnp.zeros((m + 1, q + 1), dtype).at[1:, 1:].set(cost.T.astype(dtype))
    inf = jnp.array(jnp.inf, dtype)
    # Only the first Q valid rows can be matched (more objects than queries is an error on the
    # validating path); later valid rows are skipped and stay -1.
    take = valid & (jnp.cumsum(valid) <= q)
    cols = jnp.arange(q + 1)

    def add_row(i, carry):
        u, v, p, way = carry
        p = p.at[0].set(i)

        def searching(s):
            j0, k = s[5], s[6]
            return (p[j0] != 0) & (k <= q)                 # k bounds the loop even for NaN costs

        def grow(s):
            # p is fixed during the search; only the tree, slacks and potentials change
            used, minv, way, u, v, j0, k = s
            used = used.at[j0].set(True)
            i0 = p[j0]
            cur = a[i0] - u[i0] - v                        # reduced costs of row i0, (Q+1,)
            better = ~used & (cur < minv)
            minv = jnp.where(better, cur, minv)
            way = jnp.where(better, j0, way)
            slack = jnp.where(used, inf, minv)
            j1 = jnp.argmin(slack)
            delta = slack[j1]
            u = u.at[p].add(jnp.where(used, delta, 0))     # rows on the tree (distinct for used j)
            v = jnp.where(used, v - delta, v)
            minv = jnp.where(used, minv, minv - delta)
            return used, minv, way, u, v, j1, k + 1

        init = (cols == -1, jnp.full((q + 1,), inf), way, u, v, jnp.int32(0), jnp.int32(0))
        _, _, way, u, v, j_end, _ = jax.lax.while_loop(searching, grow, init)

        def flip(s):                                       # augment along the path to j_end
            p, j0, k = s
            j1 = way[j0]
            return p.at[j0].set(p[j1]), j1, k + 1

        # the path has at most Q + 1 columns; the bound only matters for non-finite costs
        p, _, _ = jax.lax.while_loop(lambda s: (s[1] != 0) & (s[2] <= q), flip,
                                     (p, j_end, jnp.int32(0)))
        return u, v, p, way

    def maybe_add(i, carry):
        return jax.lax.cond(take[i - 1], lambda c: add_row(i, c), lambda c: c, carry)

    init = (jnp.zeros((m + 1,), dtype), jnp.zeros((q + 1,), dtype),
            jnp.zeros((q + 1,), jnp.int32), jnp.zeros((q + 1,), jnp.int32))
    _, _, p, _ = jax.lax.fori_loop(1, m + 1, maybe_add, init)
    row = jnp.where(p[1:] > 0, p[1:] - 1, m)               # row of each query; m = unmatched
    return jnp.full((m,), -1, jnp.int32).at[row].set(jnp.arange(q, dtype=jnp.int32), mode="drop")


def assign_jax(cost, valid):
    """Minimum-cost assignment per leading index, in-graph (same contract as `matching.assign`).

    cost (..., Q, M) float: cost of query q for ground-truth slot m (finite values);
    valid (..., M) bool: which slots hold an object.
    Returns (..., M) int32: the query matched to each valid slot (distinct within a matrix),
    -1 for padding. Ties between optimal assignments are broken arbitrarily.

    Jit- and vmap-able; no gradient flows through it (the cost is `stop_gradient`-ed and the
    result is an integer array). Time O(M² Q) per matrix (module docstring).

    More valid objects than queries (M_valid > Q) has no full assignment. A traced call cannot
    raise, so it matches the first Q valid slots (in slot order) optimally among themselves
    and leaves the rest at -1; a call with concrete `valid` raises ValueError instead, as the
    validating path `matching.assign_numpy` does. Non-finite costs (NaN, ±inf) are not checked:
    every loop is bounded, so the call still ends, with an arbitrary injective result that may
    leave valid slots at -1.
    """
    cost = jax.lax.stop_gradient(jnp.asarray(cost))
    valid = jnp.asarray(valid, bool)
    q, m = cost.shape[-2:]
    if cost.shape[:-2] != valid.shape[:-1] or valid.shape[-1] != m:
        raise ValueError(f"cost {cost.shape} (..., Q, M) and valid {valid.shape} (..., M) disagree")
    if not isinstance(valid, jax.core.Tracer):
        most = int(np.asarray(valid).reshape(-1, m).sum(-1).max(initial=0))
        if most > q:
            raise ValueError(f"{most} objects but only {q} queries; raise the query count")
    lead = cost.shape[:-2]
    n = int(np.prod(lead, dtype=np.int64))
    flat = jax.vmap(_assign_one)(cost.reshape((n, q, m)), valid.reshape((n, m)))
    return flat.reshape(lead + (m,))
