"""TRACTOR-UL over a grid of (initial utility, step size, seed) in one vmapped call, and the
per-part helpers: PRNG streams by name, expert return distributions, CATY-UL scores."""
from __future__ import annotations

import zlib

import jax
import jax.numpy as jnp
import numpy as np

from lib.risk_irl import caty, data, projection, returns, tractor
from lib.risk_irl.mdp import backward_induction


def part_key(config, *names: str) -> jax.Array:
    """A PRNG key for the stream `names` of the run with `config.seed`."""
    return jax.random.PRNGKey((config.seed * 7919 + zlib.crc32(":".join(names).encode())) % 2 ** 31)


def se(a: np.ndarray, axis: int) -> np.ndarray:
    """Standard error of the mean along `axis` (zeros for a single sample)."""
    a = np.asarray(a)
    if a.shape[axis] < 2:
        return np.zeros_like(a.mean(axis=axis))
    return a.std(axis=axis, ddof=1) / np.sqrt(a.shape[axis])


def slope(config) -> float:
    return projection.slope_bound(config.grid.horizon, config.grid.n, config.tractor.lipschitz)


def tractor_grid(config, envs, eta_expert, inits, step_sizes, num_seeds, key, *, adam=False,
                 eval_every=None) -> dict:
    """TRACTOR-UL for every (initial utility, step size, seed), vmapped in one call.

    inits: (I, d); returns numpy arrays with leading axes (I, len(step_sizes), num_seeds)."""
    t = config.tractor
    inits = jnp.asarray(inits, jnp.float32)
    num_i, num_a = inits.shape[0], len(step_sizes)
    grid_i, grid_a, _ = np.meshgrid(np.arange(num_i), np.arange(num_a), np.arange(num_seeds),
                                    indexing="ij")
    keys = jax.random.split(key, grid_i.size)
    fn = lambda u0, a, k: tractor.run(
        envs, eta_expert, u0, a, k, n=config.grid.n, num_iters=t.num_iters,
        eval_every=eval_every or t.eval_every, method=t.method, num=t.num_traj,
        slope=slope(config), horizon=float(config.grid.horizon), adam=adam,
        proj_iters=t.proj_iters)
    alphas = jnp.asarray(step_sizes, jnp.float32)[grid_a.ravel()]
    trace = jax.vmap(fn)(inits[grid_i.ravel()], alphas, keys)
    shape = (num_i, num_a, num_seeds)
    return {f: np.asarray(getattr(trace, f)).reshape(shape + np.shape(getattr(trace, f))[1:])
            for f in trace._fields}


def summarise(tr: dict, u_true=None) -> dict:
    """Means over seeds (last axis of the run grid) of a tractor_grid result."""
    c = tr["c_max"]                                            # (I, A, seeds, E)
    c0, c_t = c[..., 0].mean(axis=2), c[..., -1].mean(axis=2)
    out = {"steps": tr["steps"][0, 0, 0], "curve": c.mean(axis=2), "curve_se": se(c, 2),
           "c0": c0, "cT": c_t, "cT_se": se(c[..., -1], 2),
           "rel_T": tr["c_rel_max"][..., -1].mean(axis=2), "ratio": c_t / np.maximum(c0, 1e-12),
           "utility": tr["utility"].mean(axis=2),
           "max_projection_gap": float(tr["projection_gap"].max())}
    if u_true is not None:
        u_true = np.asarray(u_true)
        out["rmse_true"] = np.sqrt(np.mean((tr["utility"] - u_true) ** 2, axis=-1)).mean(axis=2)
        out["rmse_true_init"] = np.sqrt(np.mean((tr["averaged"][..., 0, :] - u_true) ** 2,
                                                axis=-1)).mean(axis=2)
    return out


def expert_eta(config, env, policy, key):
    return returns.distribution_mc(env, jnp.asarray(policy), key, config.grid.n,
                                   config.tractor.num_expert)


def caty_scores(config, env, utility, eta_e, key):
    t = config.tractor
    r = caty.caty(env, utility, eta_e, key, n=config.grid.n, num_expert=t.num_expert,
                  method=t.method, num=t.num_traj, delta=config.caty.delta)
    return {f: np.asarray(getattr(r, f)).tolist() for f in r._fields}


def noisy_expert(config, env, u_true, noise, key_name):
    g = config.grid
    policy, _ = backward_induction(env, u_true, g.n)
    rng = np.random.default_rng(zlib.crc32(key_name.encode()) + config.seed)
    return data.noisy_policy(np.asarray(policy), rng, noise, env.p.shape[2])
