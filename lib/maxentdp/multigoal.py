"""The multi-goal evaluation: goals reached from the start state, policy samples at the
origin, and the critic there (`diagnostics.start_state_report`)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.maxentdp import critics, diagnostics, envs, rollout

Q_GRID = 41   # the action grid of the start-state critic analysis (lib/maxentdp/diagnostics.py)


def multigoal_analysis(config, env, agent, seeds_agent, key) -> dict:
    """Goals reached by `rollouts` stochastic (and best-of-N) episodes from the start state,
    per seed, `action_samples` policy actions at the origin (seed 0 kept), and the critic at
    the origin: min(Q̄₁, Q̄₂)(0, a) on a grid of actions, its local maxima and the sector
    masses of exp(Q/α) against the policy's (`diagnostics.start_state_report`)."""
    p = envs.MultiGoalParams(**{k: float(config.env.multigoal[k])
                                for k in envs.MultiGoalParams()._fields})
    n = config.multigoal_eval.rollouts
    q_net = critics.TwinQ(tuple(config.agent.critic_hidden))
    grid = jnp.asarray(diagnostics.action_grid(Q_GRID))

    def per_seed(ag, k):
        k1, k2, k3 = jax.random.split(k, 3)
        out = {}
        for mode, stochastic, kk in (("stochastic", True, k1), ("eval", False, k2)):
            ev = rollout.evaluate(env, agent, ag, kk, n, stochastic=stochastic)
            goal = jnp.argmin(envs.goal_distances(p, ev["final_obs"]), axis=-1)
            goal = jnp.where(ev["terminated"] > 0, goal, -1)
            out[mode] = jnp.stack([jnp.sum(goal == g) for g in range(4)])   # (4,) counts
            out[mode + "_return"] = jnp.mean(ev["return"])
        out["actions"] = agent.act(ag, jnp.zeros((config.multigoal_eval.action_samples, 2)), k3)
        out["q_start"] = jnp.min(q_net.apply(ag["target_critic"], jnp.zeros_like(grid), grid), 0)
        return out

    num_seeds = jax.tree.leaves(seeds_agent)[0].shape[0]
    res = jax.device_get(jax.jit(jax.vmap(per_seed))(seeds_agent,
                                                     jax.random.split(key, num_seeds)))
    out = {"rollouts": n, "goals": [tuple(r) for r in envs.goals(p).tolist()]}
    for mode in ("stochastic", "eval"):
        counts = np.asarray(res[mode])                                  # (S, 4)
        frac = counts / n
        with np.errstate(divide="ignore", invalid="ignore"):
            probs = counts / np.maximum(counts.sum(1, keepdims=True), 1)
            ent = -np.sum(np.where(probs > 0, probs * np.log(probs), 0.0), axis=1)
        out[mode] = {"goal_counts": counts.tolist(), "distinct_goals": (counts > 0).sum(1).tolist(),
                     "reached_fraction": frac.sum(1).tolist(), "goal_entropy": ent.tolist(),
                     "return": np.asarray(res[mode + "_return"]).tolist()}
    out["actions_seed0"] = np.asarray(res["actions"][0]).tolist()
    alpha = np.exp(np.asarray(jax.device_get(seeds_agent["log_alpha"])))
    out["start_state_q"] = diagnostics.start_state_report(np.asarray(res["q_start"]),
                                                          np.asarray(res["actions"]), alpha)
    return out
