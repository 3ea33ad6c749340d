"""The two CADES non-conformity scores: KL divergences of KDEs of rescaled sequences.

Given a rescaled sequence τ_1 < … < τ_N on [0, V] (`lib.tpp.rescale`):

  s_arr = KL(U[0,1] ‖ p̂_arr) = ∫_0^1 −log p̂_arr(u) du,            p̂_arr = KDE of τ_i / V
  s_int = KL(Exp(1) ‖ p̂_int) = −1 − ∫_0^{top} e^{−x} log p̂_int(x) dx,
                                                        p̂_int = KDE of the N + 1 gaps w_i
                                                        of [0, τ_1, …, τ_N, V]

(the entropies of U[0,1] and Exp(1) are 0 and 1). As in CADES's code: Gaussian KDEs with
scipy's `bw_method = h` convention (σ = h × sample std, ddof = 1), evaluated on 100 grid
points, floored at 1e-10, trapezoid rule. A degenerate sample (< 2 points, or all points
exactly equal) gets the fixed width σ = h, and for s_int the integration range is then
widened: top = 2 max w + 10 (otherwise top = 2 max w).

Everything is batched with masks: inputs (B, L) with a validity mask; the memory is
(B, 100, L), so callers score in chunks (`lib.cades.baselines.make_scorer`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.tpp.rescale import Rescaled, gaps

GRID = 100
FLOOR = 1e-10


def degenerate(x: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """True when the masked sample x (L,) has < 2 points or all its points are exactly equal."""
    first = x[jnp.argmax(mask)]
    return (mask.sum() < 2) | jnp.all(jnp.where(mask, x == first, True))


def kde_on_grid(x: jnp.ndarray, mask: jnp.ndarray, grid: jnp.ndarray, h: float) -> jnp.ndarray:
    """Gaussian KDE of the masked sample x (L,) at `grid` (G,), scipy bandwidth factor h;
    σ = h for a degenerate sample (`degenerate`)."""
    n = mask.sum()
    nf = jnp.maximum(n, 1).astype(x.dtype)
    mean = jnp.where(mask, x, 0.0).sum() / nf
    var = jnp.where(mask, (x - mean) ** 2, 0.0).sum() / jnp.maximum(n - 1, 1)
    std = jnp.sqrt(var)
    sigma = jnp.where(degenerate(x, mask) | (std == 0), h, h * std)
    z = (grid[:, None] - x[None, :]) / sigma
    dens = jnp.where(mask[None, :], jnp.exp(-0.5 * z * z), 0.0).sum(-1)
    return dens / (nf * sigma * jnp.sqrt(2 * jnp.pi))


def _trapz(y, x):
    return jnp.sum(0.5 * (y[1:] + y[:-1]) * (x[1:] - x[:-1]))


def kl_arr_single(u: jnp.ndarray, mask: jnp.ndarray, h: float) -> jnp.ndarray:
    """∫_0^1 −log max(p̂(u), 1e-10) du for normalised arrivals u (L,) in [0, 1]."""
    grid = jnp.linspace(0.0, 1.0, GRID)
    p = jnp.maximum(kde_on_grid(u, mask, grid, h), FLOOR)
    return _trapz(-jnp.log(p), grid)


def kl_int_single(w: jnp.ndarray, mask: jnp.ndarray, h: float) -> jnp.ndarray:
    """−1 − ∫_0^{top} e^{−x} log max(p̂(x), 1e-10) dx for gaps w (L,); top = 2 max w, plus 10
    when the gaps are degenerate (at most one, or all equal)."""
    top = 2.0 * jnp.max(jnp.where(mask, w, 0.0)) + jnp.where(degenerate(w, mask), 10.0, 0.0)
    grid = jnp.linspace(0.0, 1.0, GRID) * jnp.maximum(top, 1e-6)
    p = jnp.maximum(kde_on_grid(w, mask, grid, h), FLOOR)
    return -1.0 - _trapz(jnp.exp(-grid) * jnp.log(p), grid)


@jax.jit   # one program per batch shape, also when called outside jit
def kl_arr(r: Rescaled, h: float) -> jnp.ndarray:
    """s_arr per sequence, (B,)."""
    u = r.tau / r.V[:, None]
    return jax.vmap(kl_arr_single, in_axes=(0, 0, None))(u, r.mask, h)


@jax.jit   # one program per batch shape, also when called outside jit
def kl_int(r: Rescaled, h: float) -> jnp.ndarray:
    """s_int per sequence, (B,)."""
    w, m = gaps(r)
    return jax.vmap(kl_int_single, in_axes=(0, 0, None))(w, m, h)
