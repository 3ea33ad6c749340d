"""Tabular episodic MDPs, the enlarged state (s, y) and optimal policies for a utility U.

Notation (paper Sec. 2–3): horizon H, states S, actions A, transition p(s'|s, a, h), reward
r(s, a, h) ∈ [0, 1]. The return is G = Σ_{h<H} r_h ∈ [0, H]. A risk-sensitive agent
maximises E_π[U(G)] for a non-decreasing utility U: [0, H] → R.

Discretisation (the paper's RS-MDP on a grid of step ε₀ = 1/n): every reward is rounded
down to the grid, k(s, a, h) = ⌊r(s, a, h)·n⌋ grid steps, so the cumulative reward is the
integer index y ∈ {0, …, H n} (value y/n) and the enlarged state (s, y) is finite. This is
exactly the paper's `next_y = ⌊(y + r)/ε₀⌋` with y on the grid; it makes every return at most
H ε₀ smaller than the undiscretised one. A utility is the vector U ∈ R^d, d = H n + 1, of its
values on the grid.

Backward induction (the RS-MDP Bellman equations):

    V_H(s, y) = U(y),
    Q_h(s, y, a) = Σ_{s'} p(s'|s, a, h) V_{h+1}(s', y + k(s, a, h)),
    V_h(s, y) = max_a Q_h(s, y, a),   π_h(s, y) = argmax_a Q_h(s, y, a).

At step h only y ≤ h n is reachable, so step h works on the first h n + 1 grid points
(40 % less work than the full grid for H = 5); entries beyond are padded (value 0, action 0)
and never visited.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

ROW_SUM_TOL = 1e-5


class MDP(NamedTuple):
    """Arrays of one tabular episodic MDP (a pytree; a leading axis batches environments).

    p:  (H, S, A, S) float32, p[h, s, a, s'] = p(s'|s, a, h)
    r:  (H, S, A) float32 rewards in [0, 1]
    k:  (H, S, A) int32 rewards in grid steps, ⌊r n⌋
    s0: () int32 initial state
    cdf: (H, S, A, S) float32 cumulative sums of p over s' (for sampling; computed once on
         the host, since XLA's CPU cumsum over long axes is slow)
    """

    p: jax.Array
    r: jax.Array
    k: jax.Array
    s0: jax.Array
    cdf: jax.Array


def grid_size(horizon: int, n: int) -> int:
    """d = H n + 1 grid points for returns in [0, H] with step 1/n."""
    return horizon * n + 1


def make_mdp(p, r, s0: int, n: int) -> MDP:
    """Check a tabular MDP given as numpy-like arrays and discretise its rewards.

    p: (H, S, A, S) transition probabilities (each row p[h, s, a, :] sums to one),
    r: (H, S, A) rewards in [0, 1], s0: initial state, n: grid points per unit of return
    (ε₀ = 1/n). Raises ValueError naming the first offending entry before any compute.
    """
    p = np.asarray(p)
    p = p if p.dtype in (np.float32, np.float64) else p.astype(np.float64)
    r = np.asarray(r, dtype=np.float64)
    if p.ndim != 4 or p.shape[1] != p.shape[3]:
        raise ValueError(f"transition array p must have shape (H, S, A, S); got {p.shape}")
    horizon, num_s, num_a, _ = p.shape
    if r.shape != (horizon, num_s, num_a):
        raise ValueError(f"reward array r must have shape (H, S, A) = {(horizon, num_s, num_a)}; "
                         f"got {r.shape}")
    if horizon < 1 or num_a < 1 or num_s < 1:
        raise ValueError(f"empty MDP: H = {horizon}, S = {num_s}, A = {num_a}")
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"grid points per unit n must be an int >= 1; got {n!r}")
    if not (0 <= int(s0) < num_s):
        raise ValueError(f"initial state s0 = {s0} is not in [0, {num_s})")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        h, s, a, t = np.argwhere(~np.isfinite(p) | (p < 0))[0]
        raise ValueError(f"transition probability p[h={h}, s={s}, a={a}, s'={t}] = "
                         f"{p[h, s, a, t]!r} is not a probability")
    sums = p.sum(axis=-1, dtype=np.float64)
    bad = np.abs(sums - 1.0) > ROW_SUM_TOL
    if np.any(bad):
        h, s, a = np.argwhere(bad)[0]
        raise ValueError(f"transition row p[h={h}, s={s}, a={a}, :] sums to {sums[h, s, a]:.6g}, "
                         f"not 1 (tolerance {ROW_SUM_TOL})")
    bad = ~np.isfinite(r) | (r < 0) | (r > 1)
    if np.any(bad):
        h, s, a = np.argwhere(bad)[0]
        raise ValueError(f"reward r[h={h}, s={s}, a={a}] = {r[h, s, a]!r} is outside [0, 1]")
    k = np.floor(r * n + 1e-9).astype(np.int32)           # 1e-9: 0.03·100 is 2.9999999999999996
    p = (p / sums[..., None].astype(p.dtype)).astype(np.float32)
    return MDP(p=jnp.asarray(p), r=jnp.asarray(r, jnp.float32),
               k=jnp.asarray(k), s0=jnp.asarray(int(s0), jnp.int32),
               cdf=jnp.asarray(np.cumsum(p, axis=-1, dtype=np.float32)))


def horizon_of(mdp: MDP) -> int:
    return mdp.p.shape[-4]


@functools.partial(jax.jit, static_argnames=("n",))
def backward_induction(mdp: MDP, utility: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    """Optimal policy and values of the RS-MDP for utility U (one environment).

    utility: (d,) values of U on the grid, d = H n + 1.
    Returns (policy, values): policy (H, S, d) int32 (π_h(s, y), lowest index on ties),
    values (H + 1, S, d) float32 (V_h(s, y); V_H(s, ·) = U). Entries with y > h n are not
    reachable and hold 0.
    """
    horizon, num_s = mdp.p.shape[0], mdp.p.shape[1]
    d = grid_size(horizon, n)
    if utility.shape != (d,):
        raise ValueError(f"utility must have shape ({d},) for H = {horizon}, n = {n}; "
                         f"got {utility.shape}")
    v_next = jnp.broadcast_to(utility.astype(jnp.float32), (num_s, d))
    values, policies = [v_next], []
    for h in reversed(range(horizon)):
        m_cur, m_next = h * n + 1, (h + 1) * n + 1
        expected = jnp.einsum("sat,ty->say", mdp.p[h], v_next[:, :m_next])   # (S, A, m_next)
        idx = jnp.arange(m_cur)[None, None, :] + mdp.k[h][:, :, None]        # ≤ m_next − 1
        q = jnp.take_along_axis(expected, idx, axis=2)                        # (S, A, m_cur)
        v_h = jnp.pad(q.max(axis=1), ((0, 0), (0, d - m_cur)))
        pi_h = jnp.pad(q.argmax(axis=1).astype(jnp.int32), ((0, 0), (0, d - m_cur)))
        values.append(v_h)
        policies.append(pi_h)
        v_next = v_h
    return jnp.stack(policies[::-1]), jnp.stack(values[::-1])


@jax.jit
def risk_neutral_values(mdp: MDP, rewards: jax.Array | None = None) -> jax.Array:
    """Ordinary finite-horizon value iteration V_h(s) = max_a r + Σ p V_{h+1}, (H + 1, S).

    rewards: (H, S, A), default mdp.r. Used to check that a linear utility makes the
    RS-MDP risk-neutral: V^U_h(s, y) = y/n + V_h(s) with the grid rewards k/n.
    """
    rewards = mdp.r if rewards is None else rewards
    horizon, num_s = mdp.p.shape[0], mdp.p.shape[1]
    v = jnp.zeros((num_s,), jnp.float32)
    out = [v]
    for h in reversed(range(horizon)):
        v = (rewards[h] + jnp.einsum("sat,t->sa", mdp.p[h], v)).max(axis=1)
        out.append(v)
    return jnp.stack(out[::-1])
