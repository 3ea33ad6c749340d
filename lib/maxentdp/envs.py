"""Environments behind one small interface, all pure JAX (collection stays on device).

An `Env` holds two pure functions over an opaque state pytree:

    reset(key)                   -> (state, obs (obs_dim,))
    step(state, action, key)     -> (state, obs (obs_dim,), reward (), terminated ())

Actions are always in [-1, 1]^act_dim; an adapter rescales them to the task's range.
`terminated` marks a true terminal state (the TD target drops the bootstrap); the time
limit `horizon` is not part of the state: the collector (`rollout.py`) counts steps and
truncates, so a time-out still bootstraps.

Environments:
  multigoal    the 2-D point mass of Haarnoja et al. (2017) used by MaxEntDP's
               multi-goal figure, implemented here (notes C.4)
  pendulum     gymnax `Pendulum-v1` (torque = 2·action), horizon 200
  hopper, halfcheetah, ... brax 0.14 locomotion tasks (`brax.envs.get_environment`)
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

BRAX_TASKS = ("hopper", "halfcheetah", "walker2d", "ant", "inverted_pendulum", "reacher")
NAMES = ("multigoal", "pendulum") + BRAX_TASKS


class Env(NamedTuple):
    name: str
    obs_dim: int
    act_dim: int
    horizon: int
    reset: Callable[[jax.Array], tuple[Any, jax.Array]]
    step: Callable[[Any, jax.Array, jax.Array], tuple[Any, jax.Array, jax.Array, jax.Array]]


# ----------------------------------------------------------------------------- multi-goal


class MultiGoalParams(NamedTuple):
    """Point mass s' = clip(s + a, -bound, bound), goals at (±r, 0) and (0, ±r).

    reward(s, a, s') = −action_cost·‖a‖² − distance_cost·min_g ‖s' − g‖² + goal_reward·[at goal]
    terminated when min_g ‖s' − g‖ < threshold; s₀ ~ N(0, init_std² I).
    """

    goal_radius: float = 5.0
    threshold: float = 1.0
    action_cost: float = 30.0
    distance_cost: float = 1.0
    goal_reward: float = 10.0
    init_std: float = 0.1
    bound: float = 7.0


def goals(p: MultiGoalParams) -> jax.Array:
    """(4, 2): the goals (+r, 0), (−r, 0), (0, +r), (0, −r)."""
    r = p.goal_radius
    return jnp.array([[r, 0.0], [-r, 0.0], [0.0, r], [0.0, -r]], jnp.float32)


def goal_distances(p: MultiGoalParams, pos: jax.Array) -> jax.Array:
    """pos (..., 2) -> (..., 4) Euclidean distances to the goals."""
    return jnp.linalg.norm(pos[..., None, :] - goals(p), axis=-1)


def multigoal(p: MultiGoalParams = MultiGoalParams(), horizon: int = 30) -> Env:
    """The multi-goal environment; its state is the position (2,), observed directly."""

    def reset(key):
        pos = p.init_std * jax.random.normal(key, (2,), jnp.float32)
        return pos, pos

    def step(pos, action, key):
        del key  # deterministic dynamics
        action = jnp.clip(action, -1.0, 1.0)
        new = jnp.clip(pos + action, -p.bound, p.bound)
        dist = goal_distances(p, new).min()
        at_goal = dist < p.threshold
        reward = (-p.action_cost * jnp.sum(action ** 2) - p.distance_cost * dist ** 2
                  + p.goal_reward * at_goal)
        return new, new, reward, at_goal

    return Env("multigoal", 2, 2, horizon, reset, step)


# ----------------------------------------------------------------------------- gymnax


def pendulum(horizon: int = 200) -> Env:
    """gymnax `Pendulum-v1` through its `reset_env` / `step_env` (no auto-reset inside);
    action a ∈ [-1, 1] is the torque a·max_torque. Never terminates (time limit only)."""
    import gymnax  # optional dependency: pip install gymnax

    env, params = gymnax.make("Pendulum-v1")
    max_torque = params.max_torque

    def reset(key):
        obs, state = env.reset_env(key, params)
        return state, obs

    def step(state, action, key):
        obs, state, reward, _, _ = env.step_env(key, state, action * max_torque, params)
        return state, obs, reward.astype(jnp.float32), jnp.asarray(False)

    obs_dim = env.observation_space(params).shape[0]
    return Env("pendulum", obs_dim, env.num_actions, horizon, reset, step)


# ----------------------------------------------------------------------------- brax


def brax_task(name: str, backend: str = "positional", horizon: int = 1000) -> Env:
    """A brax locomotion task (actions already in [-1, 1]); `terminated` is brax's `done`
    (e.g. hopper falling), the time limit is the collector's."""
    from brax import envs as brax_envs  # optional dependency: pip install brax

    env = brax_envs.get_environment(name, backend=backend)

    def reset(key):
        state = env.reset(key)
        return state, state.obs

    def step(state, action, key):
        del key  # brax dynamics are deterministic
        state = env.step(state, action)
        return state, state.obs, state.reward, state.done > 0.5

    return Env(name, env.observation_size, env.action_size, horizon, reset, step)


def make(name: str, cfg=None) -> Env:
    """Build an environment by name; `cfg` is the config's `envs.<name>` block (or None
    for the defaults)."""
    get = (lambda k, d: cfg[k] if cfg is not None and k in cfg else d)
    if name == "multigoal":
        p = MultiGoalParams(**{k: float(get(k, v)) for k, v in MultiGoalParams()._asdict().items()})
        return multigoal(p, int(get("horizon", 30)))
    if name == "pendulum":
        return pendulum(int(get("horizon", 200)))
    if name in BRAX_TASKS:
        return brax_task(name, get("backend", "positional"), int(get("horizon", 1000)))
    raise ValueError(f"unknown environment {name!r}; expected one of {list(NAMES)}")
