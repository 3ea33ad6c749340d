"""Return distributions η^π ∈ Δ^d of a policy on the enlarged state (s, y).

A policy is either deterministic, (H, S, d) int32 actions π_h(s, y), or stochastic,
(H, S, d, A) float probabilities. η^π(y) = P_π(Σ_h k(s_h, a_h, h) = y), y ∈ {0, …, H n} in grid
steps, is computed two ways:

* exactly by the forward dynamic programme on the occupancy μ_h(s, y) (paper App. on the
  RS-MDP): μ_0 = δ(s_0, 0),
      μ_{h+1}(s', y') = Σ_{s, a} μ_h(s, y) π_h(a|s, y) p(s'|s, a, h) [y' = y + k(s, a, h)],
  η = Σ_s μ_H(s, ·); cost O(H S² A d), the same as one backward induction;
* by Monte-Carlo rollouts from s_0 (what CATY-UL / TRACTOR-UL use, and how demonstrations
  are summarised): the empirical histogram of the grid return of `num` episodes.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from lib.risk_irl.mdp import MDP, grid_size


def as_probabilities(policy: jax.Array, num_actions: int) -> jax.Array:
    """(H, S, d) int actions → (H, S, d, A) one-hot; a stochastic policy passes through."""
    if jnp.issubdtype(policy.dtype, jnp.integer):
        return jax.nn.one_hot(policy, num_actions, dtype=jnp.float32)
    return policy.astype(jnp.float32)


@functools.partial(jax.jit, static_argnames=("n",))
def occupancy(mdp: MDP, policy: jax.Array, n: int) -> jax.Array:
    """Exact occupancies μ_h(s, y), h = 0..H, (H + 1, S, d) float32 (each slice sums to one)."""
    horizon, num_s, num_a = mdp.p.shape[0], mdp.p.shape[1], mdp.p.shape[2]
    d = grid_size(horizon, n)
    probs = as_probabilities(policy, num_a)                                   # (H, S, d, A)
    mu = jnp.zeros((num_s, d), jnp.float32).at[mdp.s0, 0].set(1.0)
    out = [mu]
    for h in range(horizon):
        m_cur, m_next = h * n + 1, (h + 1) * n + 1
        mass = mu[:, :m_cur, None] * probs[h, :, :m_cur, :]                  # (S, m_cur, A)
        mass = jnp.pad(jnp.transpose(mass, (0, 2, 1)), ((0, 0), (0, 0), (n, n)))
        # shifted[s, a, y'] = mass[s, a, y' − k(s, a, h)]: a gather (k ≤ n), not a scatter
        src = jnp.arange(m_next)[None, None, :] - mdp.k[h][:, :, None] + n    # (S, A, m_next)
        shifted = jnp.take_along_axis(mass, src, axis=2)
        mu = jnp.einsum("sat,say->ty", mdp.p[h], shifted)                     # (S, m_next)
        mu = jnp.pad(mu, ((0, 0), (0, d - m_next)))
        out.append(mu)
    return jnp.stack(out)


@functools.partial(jax.jit, static_argnames=("n",))
def distribution_exact(mdp: MDP, policy: jax.Array, n: int) -> jax.Array:
    """η^π by the forward DP, (d,) float32 summing to one."""
    return occupancy(mdp, policy, n)[-1].sum(axis=0)


@functools.partial(jax.jit, static_argnames=("n", "num"))
def sample_returns(mdp: MDP, policy: jax.Array, key: jax.Array, n: int, num: int) -> jax.Array:
    """Grid returns (num,) int32 of `num` independent episodes from s_0 under `policy`.

    Next states are drawn by inverse CDF (one uniform per step and episode), actions of a
    stochastic policy likewise.
    """
    horizon, num_s, num_a = mdp.p.shape[0], mdp.p.shape[1], mdp.p.shape[2]
    stochastic = not jnp.issubdtype(policy.dtype, jnp.integer)
    s = jnp.full((num,), mdp.s0, jnp.int32)
    y = jnp.zeros((num,), jnp.int32)
    keys = jax.random.split(key, 2 * horizon)
    for h in range(horizon):
        if stochastic:
            row = jnp.cumsum(policy[h, s, y], axis=-1)                 # (num, A), A small
            u = jax.random.uniform(keys[2 * h], (num, 1)) * row[:, -1:]
            a = jnp.minimum(jnp.sum(row < u, axis=-1), num_a - 1)
        else:
            a = policy[h, s, y]
        y = y + mdp.k[h, s, a]
        row = mdp.cdf[h, s, a]                                                # (num, S)
        u = jax.random.uniform(keys[2 * h + 1], (num, 1)) * row[:, -1:]
        s = jnp.minimum(jnp.sum(row < u, axis=-1), num_s - 1).astype(jnp.int32)
    return y


@functools.partial(jax.jit, static_argnames=("n", "num"))
def distribution_mc(mdp: MDP, policy: jax.Array, key: jax.Array, n: int, num: int) -> jax.Array:
    """Empirical η̂^π from `num` rollouts, (d,) float32 summing to one."""
    d = grid_size(mdp.p.shape[0], n)
    g = sample_returns(mdp, policy, key, n, num)
    counts = jnp.zeros((d,), jnp.int32).at[g].add(1)
    return counts.astype(jnp.float32) / num


def distribution(mdp: MDP, policy: jax.Array, key: jax.Array, n: int, method: str,
                 num: int) -> jax.Array:
    """η^π by `method` "exact" (forward DP; key and num unused) or "mc" (num rollouts)."""
    if method == "exact":
        return distribution_exact(mdp, policy, n)
    if method == "mc":
        return distribution_mc(mdp, policy, key, n, num)
    raise ValueError(f"return-distribution method must be 'exact' or 'mc'; got {method!r}")
