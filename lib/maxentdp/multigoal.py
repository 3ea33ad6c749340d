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


# ----------------------------------------------------------------------------- random walks


def episode_goals(p: envs.MultiGoalParams, horizon: int, start: jax.Array,
                  actions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Scripted episodes in the multi-goal environment (its `step`: actions clipped to
    [−1, 1], termination within `threshold` of a goal), stopped at `horizon` steps.

    start (E, 2), actions (E, horizon, 2) -> (goal (E,) int: index into `envs.goals`, −1
    when the episode timed out; length (E,) int: steps taken).
    """
    env = envs.multigoal(p, horizon)
    if actions.shape[-2] != horizon:
        raise ValueError(f"actions have {actions.shape[-2]} steps, expected horizon = {horizon}")

    def one(pos0, acts):
        def body(c, a):
            pos, goal, length = c
            new, _, _, term = env.step(pos, a, None)
            alive = goal < 0
            g = jnp.argmin(envs.goal_distances(p, new)).astype(jnp.int32)
            goal = jnp.where(alive & term, g, goal)
            return (jnp.where(alive, new, pos), goal, length + alive.astype(jnp.int32)), None

        (_, goal, length), _ = jax.lax.scan(
            body, (pos0, jnp.int32(-1), jnp.int32(0)), acts)
        return goal, length

    return jax.vmap(one)(start, actions)


def random_episode_goals(p: envs.MultiGoalParams, horizon: int, key: jax.Array,
                         episodes: int) -> dict:
    """`episodes` episodes of uniform random actions in [−1, 1]² from s₀ ~ N(0, init_std² I)
    (the collector's warm-up): fraction reaching any goal and each goal, mean length, and
    the expected goal-reaching transitions per goal in 1,000 and 10,000 warm-up steps
    (episodes run back to back, so a warm-up of n steps holds n / mean length episodes)."""
    ks, ka = jax.random.split(key)
    start = p.init_std * jax.random.normal(ks, (episodes, 2))
    acts = jax.random.uniform(ka, (episodes, horizon, 2), minval=-1.0, maxval=1.0)
    goal, length = jax.device_get(jax.jit(episode_goals, static_argnums=(0, 1))(
        p, horizon, start, acts))
    per_goal = np.array([np.mean(goal == g) for g in range(4)])
    mean_len = float(np.mean(length))
    return {"episodes": episodes, "horizon": horizon,
            "reached_any": float(np.mean(goal >= 0)), "reached_per_goal": per_goal.tolist(),
            "mean_length": mean_len,
            "expected_hits_per_goal": {str(n): (n / mean_len * per_goal).tolist()
                                       for n in (1_000, 10_000)}}


def warmup_goal_hits(p: envs.MultiGoalParams, horizon: int, key: jax.Array,
                     steps: int) -> jax.Array:
    """Goal-reaching transitions per goal (4,) in `steps` uniform random steps with
    auto-reset at a goal or after `horizon` steps, as in the collector's warm-up
    (`rollout.random_phase`): what a replay buffer holds after the warm-up."""
    env = envs.multigoal(p, horizon)

    def body(c, k):
        pos, t, hits = c
        ka, kr = jax.random.split(k)
        a = jax.random.uniform(ka, (2,), minval=-1.0, maxval=1.0)
        new, _, _, term = env.step(pos, a, None)
        g = jnp.argmin(envs.goal_distances(p, new))
        hits = hits + term * jax.nn.one_hot(g, 4, dtype=jnp.int32)
        t = t + 1
        done = term | (t >= horizon)
        _, r_pos = env.reset(kr)
        return (jnp.where(done, r_pos, new), jnp.where(done, 0, t), hits), None

    k0, key = jax.random.split(key)
    _, pos0 = env.reset(k0)
    (_, _, hits), _ = jax.lax.scan(body, (pos0, jnp.int32(0), jnp.zeros(4, jnp.int32)),
                                   jax.random.split(key, steps))
    return hits
