"""TRACTOR-UL: find a utility compatible with the demonstrations (paper Alg. 2; code `tractor`).

Projected subgradient descent on the non-compatibility summed over N ≥ 1 environments,

    C̄(U) = Σ_i [max_π E^i_π[U(G)] − U·η^E_i],   ∂C̄(U) ∋ g = Σ_i (η^{π*_{U,i}} − η^E_i)

(Danskin: the maximising policy's return distribution is a subgradient of the convex
max_π U·η^π; the expert term is linear). For t = 0, …, T − 1

    U_{t+1} = Proj_{𝒰_L}(U_t − α g_t)        (or an Adam step on g_t, then Proj)

and the output is the averaged iterate Ū_T = (U_0 + … + U_T)/(T + 1). Every `eval_every`
iterations the averaged iterate is scored by CATY-UL, C_i(Ū_t) = Ū_t·(η^{π*_{Ū_t}, i} − η^E_i),
recording the maximum and the mean over environments (the paper's stopping statistic;
we run all T iterations and report the curve instead of stopping at a tolerance). Each
η is exact (forward DP) or from `num` Monte-Carlo rollouts, as configured.

`run` is pure and jit-able; vmap it over step sizes, initial utilities and seeds.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.risk_irl import projection, returns
from lib.risk_irl.mdp import MDP, backward_induction


class Trace(NamedTuple):
    """utility: (d,) Ū_T; last: (d,) U_T; steps: (E,) the iterations t = 0, e, …, T scored;
    c_max, c_mean, c_rel_max: (E,) max / mean over environments of C_i(Ū_t), and the
    largest relative one; averaged: (E, d) the scored Ū_t; projection_gap: () the largest
    relative duality gap gap/½‖U − v‖² of a projection (accuracy certificate)."""

    utility: jax.Array
    last: jax.Array
    steps: jax.Array
    c_max: jax.Array
    c_mean: jax.Array
    c_rel_max: jax.Array
    averaged: jax.Array
    projection_gap: jax.Array


def _etas(mdps: MDP, utility, key, n, method, num):
    """Return distributions (N, d) of the optimal policies for U in every environment."""
    keys = jax.random.split(key, mdps.p.shape[0])

    def one(m, k):
        policy, _ = backward_induction(m, utility, n)
        return returns.distribution(m, policy, k, n, method, num)

    return jax.vmap(one)(mdps, keys)


def _score(mdps, eta_expert, utility, key, n, method, num):
    eta = _etas(mdps, utility, key, n, method, num)
    c = (eta - eta_expert) @ utility
    rel = c / jnp.maximum(eta @ utility, 1e-12)
    return c.max(), c.mean(), rel.max()


@functools.partial(jax.jit, static_argnames=(
    "n", "num_iters", "eval_every", "method", "num", "slope", "horizon", "adam", "proj_iters"))
def run(mdps: MDP, eta_expert: jax.Array, init: jax.Array, step_size: jax.Array,
        key: jax.Array, *, n: int, num_iters: int, eval_every: int, method: str, num: int,
        slope: float, horizon: float, adam: bool = False, proj_iters: int = 1000) -> Trace:
    """TRACTOR-UL on N environments (mdps with a leading axis N, eta_expert (N, d)) from the
    utility `init` (d,) with step size α = `step_size`; slope = L ε₀ (projection.slope_bound)."""
    if num_iters % eval_every:
        raise ValueError(f"num_iters = {num_iters} must be a multiple of eval_every = {eval_every}")
    tx = optax.scale_by_adam()
    init = init.astype(jnp.float32)

    def step(carry, k):
        u, total, count, dual, opt_state, gap = carry
        g = (_etas(mdps, u, k, n, method, num) - eta_expert).sum(axis=0)
        if adam:
            direction, opt_state = tx.update(g, opt_state)
        else:
            direction = g
        proj = projection.project(u - step_size * direction, slope, horizon, proj_iters, dual)
        u = proj.utility
        return (u, total + u, count + 1, proj.dual, opt_state,
                jnp.maximum(gap, proj.gap / jnp.maximum(proj.objective, 1e-12))), None

    def block(carry, k):
        k_eval, k_steps = jax.random.split(k)
        avg = carry[1] / carry[2]
        scores = _score(mdps, eta_expert, avg, k_eval, n, method, num)
        carry, _ = jax.lax.scan(step, carry, jax.random.split(k_steps, eval_every))
        return carry, (scores, avg)

    num_blocks = num_iters // eval_every
    carry = (init, init, jnp.float32(1.0), jnp.zeros(init.shape[0] - 1, jnp.float32),
             tx.init(init), jnp.float32(0.0))
    k_blocks, k_last = jax.random.split(key)
    carry, ((c_max, c_mean, c_rel), avgs) = jax.lax.scan(
        block, carry, jax.random.split(k_blocks, num_blocks))
    final = carry[1] / carry[2]
    last_scores = _score(mdps, eta_expert, final, k_last, n, method, num)
    cat = lambda a, b: jnp.concatenate([a, b[None]])
    return Trace(utility=final, last=carry[0],
                 steps=jnp.arange(num_blocks + 1) * eval_every,
                 c_max=cat(c_max, last_scores[0]), c_mean=cat(c_mean, last_scores[1]),
                 c_rel_max=cat(c_rel, last_scores[2]), averaged=cat(avgs, final),
                 projection_gap=carry[5])
