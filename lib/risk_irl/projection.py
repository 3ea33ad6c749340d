"""Euclidean projection onto the utilities TRACTOR-UL searches over (a small QP, in JAX).

The set (paper Sec. 5, TRACTOR-UL), on the return grid with step ε₀ = 1/n, d points:

    𝒰_L = {U ∈ R^d : U_0 = 0, U_{d−1} = H, 0 ≤ U_{i+1} − U_i ≤ c},   c = L ε₀,

i.e. non-decreasing, bounded in [0, H] (implied), with U(0) = 0, U(H) = H, and L-Lipschitz
(|U_j − U_i| ≤ L ε₀ |j − i| for all pairs follows from the consecutive bounds by
telescoping). Without a Lipschitz bound c = H. Non-empty iff (d − 1) c ≥ H.

    Proj(v) = argmin_{U ∈ 𝒰_L} ½ ‖U − v‖².

Solver: accelerated proximal gradient (FISTA with adaptive restart) on the dual. With one
multiplier μ_i per difference and the interior values z = U_{1..d−2} free,

    U(μ) = w − Dᵀμ (interior),  w = (0, v_1, …, v_{d−2}, H),
    dual  q(μ) = −½ ‖Dᵀμ‖² + μ·diff(w) − c Σ_i max(μ_i, 0),

whose smooth part has a 4-Lipschitz gradient −diff(U(μ)); the prox of the hinge is a
shifted clip. The dual iterate is then mapped to an exactly feasible primal point (clip
each difference into [0, c] and spread the remaining mass so that the differences sum to
H), and the duality gap ½‖U − v‖² − q(μ) ≥ ½‖U − Proj(v)‖² certifies the accuracy.
Warm starts (TRACTOR passes the previous μ) make later projections cheap.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Projection(NamedTuple):
    """utility: (d,) the feasible point; dual: (d − 1,) multipliers (warm start);
    gap: () duality gap, an upper bound on ½ ‖utility − Proj(v)‖²; objective: ½ ‖utility − v‖²
    (gap/objective is the relative accuracy, ~1e-6 at best in float32)."""

    utility: jax.Array
    dual: jax.Array
    gap: jax.Array
    objective: jax.Array


def slope_bound(horizon: float, n: int, lipschitz: float | None) -> float:
    """c = L/n, or H without a Lipschitz constraint; ValueError when 𝒰_L is empty."""
    c = float(horizon) if lipschitz is None else float(lipschitz) / n
    if c * horizon * n < horizon * (1 - 1e-9):
        raise ValueError(f"no utility with U(0) = 0, U(H) = H is {lipschitz}-Lipschitz on [0, "
                         f"{horizon}] (need L >= 1)")
    return c


def _interior(v: jax.Array, mu: jax.Array, horizon: float) -> jax.Array:
    """U(μ): w − Dᵀμ with the end points fixed, (d,)."""
    inner = v[1:-1] - (mu[:-1] - mu[1:])
    return jnp.concatenate([jnp.zeros((1,), v.dtype), inner, jnp.full((1,), horizon, v.dtype)])


def _feasible(u: jax.Array, c: float, horizon: float) -> jax.Array:
    """Map a near-feasible U to a point of 𝒰_L exactly (up to float rounding)."""
    delta = jnp.clip(jnp.diff(u), 0.0, c)
    total = delta.sum()
    room = jnp.sum(c - delta)
    grow = delta + (c - delta) * jnp.clip((horizon - total) / jnp.maximum(room, 1e-30), 0.0, 1.0)
    shrink = delta * (horizon / jnp.maximum(total, 1e-30))
    delta = jnp.where(total < horizon, grow, shrink)
    out = jnp.concatenate([jnp.zeros((1,), u.dtype), jnp.cumsum(delta)])
    return jnp.minimum(out, horizon).at[-1].set(horizon)


def dual_value(v: jax.Array, mu: jax.Array, c: float, horizon: float) -> jax.Array:
    """q(μ) + ½ (v_0² + (H − v_{d−1})²), the dual objective plus the fixed end-point terms:
    a lower bound on ½ ‖Proj(v) − v‖²."""
    w = v.at[0].set(0.0).at[-1].set(horizon)
    dt_mu = mu[:-1] - mu[1:]
    ends = 0.5 * (v[0] ** 2 + (horizon - v[-1]) ** 2)
    return (ends - 0.5 * jnp.sum(dt_mu ** 2) + mu @ jnp.diff(w)
            - c * jnp.sum(jnp.maximum(mu, 0.0)))


@functools.partial(jax.jit, static_argnames=("c", "horizon", "num_iters"))
def project(v: jax.Array, c: float, horizon: float, num_iters: int = 2000,
            dual0: jax.Array | None = None) -> Projection:
    """Proj(v) onto 𝒰_L for v: (d,), slope bound c (from `slope_bound`), `num_iters` FISTA
    steps from the warm start dual0 ((d − 1,), default zeros)."""
    v = v.astype(jnp.float32)
    mu0 = jnp.zeros(v.shape[0] - 1, jnp.float32) if dual0 is None else dual0.astype(jnp.float32)
    step = 0.25

    def prox(u):
        return u - step * jnp.clip(u / step, 0.0, c)

    def body(_, carry):
        mu, y, theta = carry
        grad = -jnp.diff(_interior(v, y, horizon))
        mu_new = prox(y - step * grad)
        restart = jnp.dot(y - mu_new, mu_new - mu) > 0
        theta_new = jnp.where(restart, 1.0, 0.5 * (1 + jnp.sqrt(1 + 4 * theta ** 2)))
        beta = jnp.where(restart, 0.0, (theta - 1) / theta_new)
        return mu_new, mu_new + beta * (mu_new - mu), theta_new

    mu, _, _ = jax.lax.fori_loop(0, num_iters, body, (mu0, mu0, jnp.float32(1.0)))
    u = _feasible(_interior(v, mu, horizon), c, horizon)
    objective = 0.5 * jnp.sum((u - v) ** 2)
    return Projection(u, mu, objective - dual_value(v, mu, c, horizon), objective)


def violation(u: jax.Array, c: float, horizon: float) -> jax.Array:
    """Largest violation of any constraint of 𝒰_L by U (0 when feasible), ()."""
    diff = jnp.diff(u)
    return jnp.max(jnp.stack([jnp.abs(u[0]), jnp.abs(u[-1] - horizon), jnp.max(-diff),
                              jnp.max(diff - c), jnp.max(-u), jnp.max(u - horizon)]).clip(0.0))
