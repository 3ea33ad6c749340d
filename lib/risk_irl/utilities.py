"""Utilities U: [0, H] → R on the return grid G_i = i/n, i = 0..H n, and their checks.

The families of the paper's experiments, normalised so that U(0) = 0 and U(H) = H:

    linear          U(G) = G                         (risk-neutral)
    sqrt            U(G) = √(H G)                    (concave: risk-averse)
    square          U(G) = G²/H                      (convex: risk-seeking)
    convex_concave  U(G) = 2G²/H for G ≤ H/2, H − 2(H − G)²/H beyond (S-shaped; the
                    simulated experts of the random-MDP experiments)
    strong_concave  U(G) = H (G/H)^0.2,  strong_convex  U(G) = H (G/H)^5
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.risk_irl.mdp import grid_size

MONOTONE_TOL = 1e-6


def _families(g: np.ndarray, horizon: float) -> dict[str, np.ndarray]:
    x = g / horizon
    return {
        "linear": g,
        "sqrt": horizon * np.sqrt(x),
        "square": horizon * x ** 2,
        "convex_concave": np.where(x <= 0.5, 2 * horizon * x ** 2,
                                   horizon - 2 * horizon * (1 - x) ** 2),
        "strong_concave": horizon * x ** 0.2,
        "strong_convex": horizon * x ** 5,
    }


FAMILIES = tuple(_families(np.zeros(1), 1.0))


def returns_grid(horizon: int, n: int) -> np.ndarray:
    """The grid of returns, (H n + 1,) float64: 0, 1/n, …, H."""
    return np.arange(grid_size(horizon, n)) / n


def family(name: str, horizon: int, n: int) -> jax.Array:
    """The utility `name` (one of FAMILIES) on the grid, (H n + 1,) float32."""
    if name not in FAMILIES:
        raise ValueError(f"unknown utility family {name!r}; allowed: {list(FAMILIES)}")
    return jnp.asarray(_families(returns_grid(horizon, n), float(horizon))[name], jnp.float32)


def check_utility(utility, d: int, *, what: str = "utility") -> np.ndarray:
    """Host-side check that `utility` is a finite, non-decreasing vector of length d.

    Raises ValueError naming the first decrease (index, values) — CATY-UL is defined for
    non-decreasing utilities only. Returns the utility as a float64 numpy array.
    """
    u = np.asarray(utility, dtype=np.float64)
    if u.shape != (d,):
        raise ValueError(f"{what} must have shape ({d},) (one value per return grid point); "
                         f"got {u.shape}")
    if not np.all(np.isfinite(u)):
        i = int(np.argmin(np.isfinite(u)))
        raise ValueError(f"{what} has a non-finite value {u[i]!r} at grid index {i}")
    drops = np.flatnonzero(np.diff(u) < -MONOTONE_TOL)
    if drops.size:
        i = int(drops[0])
        raise ValueError(f"{what} is not non-decreasing: U[{i}] = {u[i]:.6g} > U[{i + 1}] = "
                         f"{u[i + 1]:.6g} (a utility must be non-decreasing in the return)")
    return u


def interpolate(knots_x, knots_u, horizon: int, n: int) -> np.ndarray:
    """Piecewise-linear utility through (knots_x, knots_u) on the grid, (H n + 1,) float64."""
    return np.interp(returns_grid(horizon, n), np.asarray(knots_x, float),
                     np.asarray(knots_u, float))


def distance(u: jax.Array, v: jax.Array) -> jax.Array:
    """Root-mean-square distance between utilities on the grid (same units as U)."""
    return jnp.sqrt(jnp.mean((u - v) ** 2, axis=-1))


def random_utilities(key: jax.Array, num: int, horizon: int, n: int, slope: float,
                     knots: int, proj_iters: int = 3000) -> jax.Array:
    """`num` random utilities of 𝒰_L, (num, H n + 1) float32: piecewise-linear through
    `knots` equally spaced points with sorted uniform values in [0, H] (ends fixed at 0 and
    H), projected onto 𝒰_L (slope bound `slope` = L ε₀) to enforce the Lipschitz bound."""
    from lib.risk_irl import projection

    g = jnp.asarray(returns_grid(horizon, n), jnp.float32)
    xs = jnp.linspace(0.0, float(horizon), knots + 2)
    inner = jnp.sort(jax.random.uniform(key, (num, knots)) * horizon, axis=1)
    ys = jnp.concatenate([jnp.zeros((num, 1)), inner, jnp.full((num, 1), float(horizon))], axis=1)
    raw = jax.vmap(lambda y: jnp.interp(g, xs, y))(ys)
    return jax.vmap(lambda v: projection.project(v, slope, float(horizon), proj_iters).utility)(raw)
