"""CATY-UL: is a utility U compatible with the expert's demonstrations?

(Non)compatibility (paper Def. of compatibility; the code's `caty`):

    C(U) = max_π E_π[U(G)] − E_{π^E}[U(G)] = U·(η^{π*_U} − η^E) ≥ 0,

absolute, and relative C(U)/(U·η^{π*_U}). U is compatible iff C(U) = 0. Here η^E is the
empirical return distribution of n_E demonstrations, π*_U comes from backward induction in
the discretised RS-MDP, and η^{π*_U} is exact (forward DP) or estimated from n_* rollouts.

Finite-sample threshold (my derivation; the paper's constants are not available to us): for
a non-decreasing U with range R = U(H) − U(0), Hoeffding's inequality bounds each empirical
expectation's error by R √(ln(4/δ)/(2 n)) with probability ≥ 1 − δ/2, and rounding rewards
down to the grid moves every return by at most H·r_res (r_res the largest reward residual
r − ⌊r n⌋/n, zero when rewards lie on the grid), hence each expectation by L_U H r_res with
L_U the largest slope of U on the grid. So with probability ≥ 1 − δ

    |Ĉ(U) − C(U)| ≤ τ = R √(ln(4/δ)/(2 n_E)) + [R √(ln(4/δ)/(2 n_*)) if η* is sampled]
                        + 2 L_U H r_res,

and CATY-UL answers "compatible" iff Ĉ(U) ≤ τ: a compatible U is accepted, and a U with
C(U) > 2τ rejected, each with probability ≥ 1 − δ. In several environments (paper Sec. 4),
U must be compatible in all of them: the answer is the conjunction, τ per environment, δ
split evenly (union bound).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from lib.risk_irl import returns
from lib.risk_irl.mdp import MDP, backward_induction, grid_size
from lib.risk_irl.utilities import check_utility


class Compatibility(NamedTuple):
    """absolute, relative: Ĉ(U) and Ĉ(U)/(U·η*); optimal_value U·η*; expert_value U·η^E;
    threshold τ; compatible: Ĉ ≤ τ. Arrays with a leading environment axis when batched."""

    absolute: jax.Array
    relative: jax.Array
    optimal_value: jax.Array
    expert_value: jax.Array
    threshold: jax.Array
    compatible: jax.Array


@functools.partial(jax.jit, static_argnames=("n", "method", "num"))
def noncompatibility(mdp: MDP, utility: jax.Array, eta_expert: jax.Array, key: jax.Array,
                     n: int, method: str = "mc", num: int = 10_000):
    """(Ĉ(U), U·η*, U·η^E) for one environment; η* of π*_U by `method` ("exact" | "mc")."""
    policy, _ = backward_induction(mdp, utility, n)
    eta = returns.distribution(mdp, policy, key, n, method, num)
    j_opt, j_exp = utility @ eta, utility @ eta_expert
    return j_opt - j_exp, j_opt, j_exp


def threshold(utility, *, n: int, horizon: int, num_expert: int, num_opt: int | None,
              delta: float, reward_residual: float = 0.0) -> float:
    """τ of the module docstring for a grid utility (num_opt None: η* computed exactly)."""
    if not 0 < delta < 1:
        raise ValueError(f"confidence delta must be in (0, 1); got {delta!r}")
    if num_expert < 1 or (num_opt is not None and num_opt < 1):
        raise ValueError(f"sample sizes must be >= 1; got n_E = {num_expert}, n_* = {num_opt}")
    u = np.asarray(utility, np.float64)
    spread = float(u[-1] - u[0])
    tau = spread * math.sqrt(math.log(4 / delta) / (2 * num_expert))
    if num_opt is not None:
        tau += spread * math.sqrt(math.log(4 / delta) / (2 * num_opt))
    slope = float(np.max(np.diff(u))) * n
    return tau + 2 * slope * horizon * reward_residual


def reward_residual(mdp: MDP, n: int) -> float:
    """Largest r − k/n over all (h, s, a) (and environments): the grid's rounding."""
    return float(jnp.max(mdp.r - mdp.k.astype(jnp.float32) / n).clip(0.0))


def caty(mdp: MDP, utility, eta_expert, key: jax.Array, *, n: int, num_expert: int,
         method: str = "mc", num: int = 10_000, delta: float = 0.05) -> Compatibility:
    """CATY-UL for U in one environment (mdp arrays unbatched) or several (leading axis N,
    eta_expert (N, d)); checks U (non-decreasing, finite, length d) before any compute."""
    batched = mdp.p.ndim == 5
    horizon = mdp.p.shape[-4]
    d = grid_size(horizon, n)
    u = check_utility(utility, d)
    eta_expert = jnp.asarray(eta_expert, jnp.float32)
    if eta_expert.shape[-1] != d:
        raise ValueError(f"expert return distribution must have length {d}; got {eta_expert.shape}")
    num_env = mdp.p.shape[0] if batched else 1
    tau = threshold(u, n=n, horizon=horizon, num_expert=num_expert,
                    num_opt=None if method == "exact" else num, delta=delta / num_env,
                    reward_residual=reward_residual(mdp, n))
    uj = jnp.asarray(u, jnp.float32)
    if batched:
        keys = jax.random.split(key, num_env)
        c, j_opt, j_exp = jax.vmap(lambda m, e, k: noncompatibility(m, uj, e, k, n, method, num))(
            mdp, eta_expert, keys)
    else:
        c, j_opt, j_exp = noncompatibility(mdp, uj, eta_expert, key, n, method, num)
    rel = c / jnp.maximum(j_opt, 1e-12)
    tau_arr = jnp.full_like(c, tau)
    return Compatibility(c, rel, j_opt, j_exp, tau_arr, c <= tau_arr)
