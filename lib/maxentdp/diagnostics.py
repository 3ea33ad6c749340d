"""Diagnostics of multi-goal mode coverage (used by experiments/maxentdp/diagnose_multigoal.py
and tests/maxentdp/test_maxentdp_fixed_q.py).

Goal sectors: an action a ∈ [−1, 1]² (at the start state s₀ = 0) belongs to sector k when its
direction is within 45° of the direction of goal k (+x, −x, +y, −y, the order of
`envs.goals`).

`fit_fixed_q` answers "does QNE with K candidates produce a multi-modal policy when Q is
FIXED to a known 4-mode function?": a diffusion policy (the agent's ε-network, one dummy
state) is trained only by the QNE loss of `q_weighted.qne_loss` towards
π*(a) ∝ exp(Q(a)/α) with

    Q(a) = max_k [h_k − c‖a − r d_k‖²],   d_k the 4 goal directions,

whose modes have widths √(α/2c) and masses ∝ exp(h_k/α) (up to the box and tanh edges).
Replay actions (where x_t is drawn from) are uniform in the box, as after the random warm-up.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim
from lib.maxentdp import diffusion_policy as dp, q_weighted

DIRECTIONS = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]], np.float32)


def sector_of(actions: np.ndarray) -> np.ndarray:
    """(N, 2) -> (N,) index of the goal direction with the largest cosine."""
    return np.argmax(np.asarray(actions) @ DIRECTIONS.T, axis=-1)


def sector_mass(actions: np.ndarray) -> np.ndarray:
    """(N, 2) -> (4,) fraction of the actions in each goal sector."""
    idx = sector_of(actions)
    return np.bincount(idx, minlength=4) / max(len(idx), 1)


def sector_stats(actions: np.ndarray, q: np.ndarray, alpha: float) -> dict:
    """Per sector: max Q, its argmax action, and (max_k Q − global max)/α (the log mass ratio
    of that sector's mode under exp(Q/α), up to the modes' widths)."""
    idx = sector_of(actions)
    qmax = float(q.max())
    out = {"q_max": qmax, "q_min": float(q.min()), "sector_q_max": [], "sector_argmax": [],
           "sector_gap_over_alpha": []}
    for k in range(4):
        qk = np.where(idx == k, q, -np.inf)
        j = int(np.argmax(qk))
        out["sector_q_max"].append(float(qk[j]))
        out["sector_argmax"].append([float(v) for v in actions[j]])
        out["sector_gap_over_alpha"].append(float((qk[j] - qmax) / alpha))
    return out


def grid_sector_mass(actions: np.ndarray, q: np.ndarray, alpha: float) -> np.ndarray:
    """(4,) sector masses of the action density ∝ exp(Q/α) given on a uniform grid of
    actions (G², 2) with values q (G²,)."""
    w = np.exp((q - q.max()) / alpha)
    idx = sector_of(actions)
    return np.array([w[idx == k].sum() for k in range(4)]) / w.sum()


def local_maxima(q: np.ndarray) -> int:
    """Strict local maxima of a (G, G) grid over its 8 neighbours (edges padded with −inf)."""
    p = np.pad(q, 1, constant_values=-np.inf)
    g = q.shape[0]
    neigh = [p[1 + di:1 + di + g, 1 + dj:1 + dj + g]
             for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)]
    return int(np.sum(np.all([q > n for n in neigh], axis=0)))


def action_grid(grid: int) -> np.ndarray:
    """(grid², 2) actions on a uniform grid of [−1, 1]² (x fastest)."""
    u = np.linspace(-1.0, 1.0, grid, dtype=np.float32)
    return np.stack(np.meshgrid(u, u, indexing="xy"), -1).reshape(-1, 2)


def start_state_report(q: np.ndarray, samples: np.ndarray, alpha: np.ndarray) -> dict:
    """Per seed, from min(Q̄₁, Q̄₂)(s₀, ·) on `action_grid(G)` (q: (S, G²)) and policy samples
    at s₀ (S, N, 2): strict local maxima of Q, sector gaps (max_k Q − max Q)/α, the sector
    masses of the target exp(Q/α) and of the policy, and the total-variation distance
    between those two sector distributions."""
    g = int(round(np.sqrt(q.shape[1])))
    acts = action_grid(g)
    out = {"grid": g, "local_maxima": [], "sector_gap_over_alpha": [], "target_sector_mass": [],
           "policy_sector_mass": [], "sector_tv": []}
    for s in range(q.shape[0]):
        a = float(alpha[s])
        target = grid_sector_mass(acts, q[s], a)
        policy = sector_mass(samples[s])
        out["local_maxima"].append(local_maxima(q[s].reshape(g, g)))
        out["sector_gap_over_alpha"].append(sector_stats(acts, q[s], a)["sector_gap_over_alpha"])
        out["target_sector_mass"].append(target.tolist())
        out["policy_sector_mass"].append(policy.tolist())
        out["sector_tv"].append(float(0.5 * np.abs(target - policy).sum()))
    return out


def four_mode_q(radius: float, curvature: float, heights) -> callable:
    """Q(a) (..., 2) -> (...) = max_k [h_k − c‖a − r d_k‖²]."""
    centres = jnp.asarray(DIRECTIONS) * radius
    h = jnp.asarray(heights, jnp.float32)

    def q(a):
        d2 = jnp.sum((a[..., None, :] - centres) ** 2, axis=-1)       # (..., 4)
        return jnp.max(h - curvature * d2, axis=-1)

    return q


def fit_fixed_q(key: jax.Array, *, alpha: float = 1.0, radius: float = 0.6,
                curvature: float = 20.0, heights=(0.0, 0.0, 0.0, 0.0), num_candidates: int = 64,
                steps: int = 10, updates: int = 1500, batch: int = 64,
                hidden: tuple = (64, 64), time_hidden: tuple = (32,), fourier: int = 16,
                lr: float = 1e-3, bound: str = "tanh", samples: int = 2000,
                replay_on_mode0: float = 0.0, jit=jax.jit) -> dict:
    """Train a diffusion policy by QNE alone towards exp(Q/α) for the fixed 4-mode Q and
    return {"sector_mass" (4,), "expected_mass" (4,), "final_loss"}; `expected_mass` is the
    sector mass of exp(Q/α) computed on a fine grid (the exact target).
    `replay_on_mode0`: the fraction of replay actions drawn near mode 0 (N(r d_0, 0.1²),
    clipped) instead of uniformly, as in a buffer filled by a policy that has collapsed
    onto one goal (QNE's x_t are noised replay actions). `jit`: the compiler wrapper (tests
    pass one with XLA optimisation off)."""
    q_fn = four_mode_q(radius, curvature, heights)
    net = dp.EpsNet(2, fourier, tuple(time_hidden), tuple(hidden))
    sched = dp.schedule(steps)
    opt = optax.adam(lr)
    obs = jnp.zeros((batch, 1))
    log_target = q_weighted.soft_q_log_target(q_fn, alpha, bound)
    k_init, k_train, k_sample = jax.random.split(key, 3)
    params = net.init(k_init, obs[:1], jnp.zeros((1, 2)), jnp.zeros((1,)))

    def loss_fn(params, k):
        ka, km, kn, kl = jax.random.split(k, 4)
        actions = jax.random.uniform(ka, (batch, 2), minval=-1.0, maxval=1.0)
        near = jnp.clip(radius * jnp.asarray(DIRECTIONS[0])
                        + 0.1 * jax.random.normal(kn, (batch, 2)), -0.999, 0.999)
        on_mode = jax.random.uniform(km, (batch, 1)) < replay_on_mode0
        actions = jnp.where(on_mode, near, actions)
        return q_weighted.qne_loss(net, params, obs, actions, kl, log_target, num_candidates,
                                   bound)

    @jit
    def run(params, key_train, key_sample):
        params, losses = optim.minimize(loss_fn, params, opt, updates,
                                        xs=jax.random.split(key_train, updates))
        acts, _ = dp.sample_policy(net, params, jnp.zeros((samples, 1)), key_sample, sched,
                                   bound)
        return acts, jnp.mean(losses[-100:])

    acts, loss = jax.device_get(run(params, k_train, k_sample))
    return {"sector_mass": sector_mass(acts).tolist(),
            "expected_mass": expected_sector_mass(q_fn, alpha, bound).tolist(),
            "final_loss": float(loss)}


def expected_sector_mass(q_fn, alpha: float, bound: str, grid: int = 401) -> np.ndarray:
    """(4,) sector masses of the action density ∝ exp(Q/α) on [−1, 1]² (a fine grid; the
    tanh-latent target has the same action density, its Jacobian cancels)."""
    del bound
    acts = action_grid(grid)
    return grid_sector_mass(acts, np.asarray(q_fn(jnp.asarray(acts))), alpha)


def fixed_q_sweep(seed: int = 0) -> list[dict]:
    """The settings of the README's fixed-Q table: symmetric modes at K = 64 and 16, one
    mode raised by α·ln 2 (target masses 0.4, 0.2, 0.2, 0.2), narrower modes (c = 80), and
    a replay buffer with 90 % of its actions on mode 0."""
    cases = [dict(num_candidates=64), dict(num_candidates=16),
             dict(num_candidates=64, heights=(float(np.log(2.0)), 0.0, 0.0, 0.0)),
             dict(num_candidates=64, curvature=80.0),
             dict(num_candidates=64, replay_on_mode0=0.9)]
    out = []
    for i, case in enumerate(cases):
        res = fit_fixed_q(jax.random.key(seed + i), **case)
        out.append({**{k: (list(v) if isinstance(v, tuple) else v) for k, v in case.items()},
                    **res})
    return out
