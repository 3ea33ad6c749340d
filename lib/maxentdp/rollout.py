"""On-device collection, updates and evaluation (lax.scan over steps, vmap over seeds).

The training state of one run is a pytree whose "seeds" entry is batched over seeds:

    {"seeds": {"agent", "buffer", "env_state", "obs", "t", "ep_return", "last_return"},
     "env_steps": (), "evals": (num_chunks, S), "chunk": ()}

`make_train_step` returns the step of `lib.common.train_loop`: one call is one *chunk* of
`chunk_len` environment steps for every seed (random uniform actions for the first
`start_steps`, then one policy sample per step followed by `utd` updates on a replay
batch), then an evaluation of every seed (`eval_episodes` episodes with `act_eval`), whose
mean return is written to `evals[chunk]` (and to the metrics as `eval_return_seed<i>`, so
that results can be written from metrics.jsonl while a run is going on).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from lib.maxentdp import replay
from lib.maxentdp.agent import Agent
from lib.maxentdp.envs import Env


class RunConfig(NamedTuple):
    num_seeds: int
    env_steps: int        # per seed
    chunk_len: int        # environment steps per train-loop step (= evaluation interval)
    start_steps: int      # uniform random actions before learning starts
    utd: int              # updates per environment step
    eval_episodes: int
    replay_capacity: int

    @property
    def num_chunks(self) -> int:
        return self.env_steps // self.chunk_len


def _select(pred, a, b):
    return jax.tree.map(lambda x, y: jnp.where(pred, x, y), a, b)


def env_transition(env: Env, carry: dict, action: jax.Array, key: jax.Array) -> dict:
    """One environment step of one seed: store the transition, auto-reset when done."""
    k_step, k_reset = jax.random.split(key)
    state, obs, reward, terminated = env.step(carry["env_state"], action, k_step)
    t = carry["t"] + 1
    done = terminated | (t >= env.horizon)
    buf = replay.add(carry["buffer"], carry["obs"], action, reward, obs,
                     1.0 - terminated.astype(jnp.float32))
    r_state, r_obs = env.reset(k_reset)
    ep_return = carry["ep_return"] + reward
    return {**carry, "buffer": buf, "env_state": _select(done, r_state, state),
            "obs": jnp.where(done, r_obs, obs), "t": jnp.where(done, 0, t),
            "ep_return": jnp.where(done, 0.0, ep_return),
            "last_return": jnp.where(done, ep_return, carry["last_return"])}


def init_seed(env: Env, agent: Agent, run: RunConfig, key: jax.Array) -> dict:
    ka, ke = jax.random.split(key)
    env_state, obs = env.reset(ke)
    return {"agent": agent.init(ka),
            "buffer": replay.init(run.replay_capacity, env.obs_dim, env.act_dim),
            "env_state": env_state, "obs": obs, "t": jnp.zeros((), jnp.int32),
            "ep_return": jnp.zeros(()), "last_return": jnp.zeros(())}


def init_state(env: Env, agent: Agent, run: RunConfig, key: jax.Array) -> dict:
    seeds = jax.vmap(lambda k: init_seed(env, agent, run, k))(jax.random.split(key, run.num_seeds))
    return {"seeds": seeds, "env_steps": jnp.zeros((), jnp.int32),
            "evals": jnp.zeros((run.num_chunks, run.num_seeds)), "chunk": jnp.zeros((), jnp.int32)}


def evaluate(env: Env, agent: Agent, agent_state: dict, key: jax.Array, episodes: int,
             stochastic: bool = False) -> dict:
    """Run `episodes` episodes in parallel for `horizon` steps (one seed).

    Returns {"return": (episodes,), "final_obs": (episodes, obs_dim), "terminated":
    (episodes,), "length": (episodes,)}; actions from `act_eval`, or from `act` when
    `stochastic` (one policy sample per step).
    """
    k_reset, k_run = jax.random.split(key)
    states, obs = jax.vmap(env.reset)(jax.random.split(k_reset, episodes))
    choose = agent.act if stochastic else agent.act_eval

    def body(c, k):
        states, obs, ret, alive, length, final_obs = c
        ka, ks = jax.random.split(k)
        action = choose(agent_state, obs, ka)
        states, obs2, r, term = jax.vmap(env.step)(states, action, jax.random.split(ks, episodes))
        ret = ret + alive * r
        length = length + alive
        final_obs = jnp.where(alive[:, None] > 0, obs2, final_obs)
        ended = alive * term.astype(jnp.float32)
        alive = alive * (1.0 - term.astype(jnp.float32))
        return (states, obs2, ret, alive, length, final_obs), ended

    zeros = jnp.zeros((episodes,))
    (_, _, ret, alive, length, final_obs), _ = jax.lax.scan(
        body, (states, obs, zeros, jnp.ones((episodes,)), zeros, obs),
        jax.random.split(k_run, env.horizon))
    return {"return": ret, "final_obs": final_obs, "terminated": 1.0 - alive, "length": length}


def make_train_step(env: Env, agent: Agent, run: RunConfig):
    """(state, batch, key) -> (state, metrics): one chunk, see the module docstring.
    `batch` is unused beyond its shape: the data are collected inside the step."""
    metric_shape = jax.eval_shape(
        lambda s, k: agent.update(s, replay.sample(init_seed(env, agent, run, k)["buffer"], k,
                                                   agent.config.batch_size), k)[1],
        jax.eval_shape(agent.init, jax.random.key(0)), jax.random.key(0))

    def random_phase(seeds, keys):
        def one(c, k):
            ka, ke = jax.random.split(k)
            a = jax.random.uniform(ka, (env.act_dim,), minval=-1.0, maxval=1.0)
            return env_transition(env, c, a, ke)
        zeros = jax.tree.map(lambda s: jnp.zeros((run.num_seeds,) + s.shape, s.dtype),
                             metric_shape)
        return jax.vmap(one)(seeds, keys), zeros

    def learn_phase(seeds, keys):
        def one(c, k):
            ka, ke, ku = jax.random.split(k, 3)
            a = agent.act(c["agent"], c["obs"][None], ka)[0]
            c = env_transition(env, c, a, ke)

            def upd(ag, kk):
                kb, kup = jax.random.split(kk)
                batch = replay.sample(c["buffer"], kb, agent.config.batch_size)
                return agent.update(ag, batch, kup)

            ag, metrics = jax.lax.scan(upd, c["agent"], jax.random.split(ku, run.utd))
            return {**c, "agent": ag}, jax.tree.map(lambda m: m[-1], metrics)
        return jax.vmap(one)(seeds, keys)

    def train_step(state, batch, key):
        del batch
        k_collect, k_eval = jax.random.split(key)

        def env_step(carry, k):
            seeds, n, msum, count = carry
            keys = jax.random.split(k, run.num_seeds)
            learning = n >= run.start_steps
            seeds, m = jax.lax.cond(learning, learn_phase, random_phase, seeds, keys)
            msum = jax.tree.map(lambda a, b: a + jnp.mean(b), msum, m)
            return (seeds, n + 1, msum, count + learning), None

        msum0 = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), metric_shape)
        (seeds, n, msum, count), _ = jax.lax.scan(
            env_step, (state["seeds"], state["env_steps"], msum0, jnp.zeros((), jnp.int32)),
            jax.random.split(k_collect, run.chunk_len))
        ev = jax.vmap(lambda ag, k: evaluate(env, agent, ag, k, run.eval_episodes))(
            seeds["agent"], jax.random.split(k_eval, run.num_seeds))
        eval_return = jnp.mean(ev["return"], axis=1)                     # (S,)
        metrics = {k: v / jnp.maximum(count, 1) for k, v in msum.items()}
        metrics.update({f"eval_return_seed{i}": eval_return[i] for i in range(run.num_seeds)})
        metrics.update(eval_return=jnp.mean(eval_return),
                       train_return=jnp.mean(seeds["last_return"]),
                       env_steps=n.astype(jnp.float32))
        new = {"seeds": seeds, "env_steps": n, "chunk": state["chunk"] + 1,
               "evals": state["evals"].at[state["chunk"]].set(eval_return)}
        return new, metrics

    return train_step
