"""The `train_loop.Task` of one (environment, algorithm) run of MaxEntDP.

The state is agent + replay buffer + environment of every seed (vmapped); one loop step is
one chunk of `eval_every` environment steps with updates, then an evaluation; the loop's
batch is only the step index, so resuming is exact.
"""
from __future__ import annotations

import numpy as np

from lib.common import train_loop
from lib.maxentdp import agent as agent_lib
from lib.maxentdp import envs, rollout


def agent_config(config, env_name: str, algo: str, num_updates: int) -> agent_lib.AgentConfig:
    a, d, e = config.agent, config.diffusion, config.env[env_name]
    return agent_lib.AgentConfig(
        algo=algo, alpha=e.alpha, auto_alpha=algo in tuple(e.auto_alpha), gamma=a.gamma,
        tau=a.tau, batch_size=a.batch_size, critic_hidden=tuple(a.critic_hidden),
        actor_hidden=tuple(a.actor_hidden), critic_lr=a.critic_lr, actor_lr=a.actor_lr,
        alpha_lr=a.alpha_lr, backup=a.backup, backup_samples=a.backup_samples,
        actor_cosine_steps=num_updates if a.actor_cosine else 0,
        steps=d.steps, bound=d.bound, fourier_dim=d.fourier_dim,
        time_hidden=tuple(d.time_hidden), eps_hidden=tuple(d.eps_hidden),
        qne_samples=d.qne_samples, logprob_draws=d.logprob_draws,
        eval_candidates=d.eval_candidates, backup_entropy=d.backup_entropy)


def run_config(config, env_name: str) -> rollout.RunConfig:
    e = config.env[env_name]
    return rollout.RunConfig(num_seeds=e.num_seeds, env_steps=e.env_steps,
                             chunk_len=e.eval_every, start_steps=e.start_steps,
                             utd=config.agent.utd, eval_episodes=e.eval_episodes,
                             replay_capacity=e.replay_capacity)


def make_task(config, env_name: str, algo: str):
    """(env, agent, run, Task) of one (environment, algorithm) pair."""
    env = envs.make(env_name, config.env[env_name].to_dict())
    run = run_config(config, env_name)
    num_updates = (run.env_steps - run.start_steps) * run.utd
    agent = agent_lib.make(agent_config(config, env_name, algo, num_updates), env.obs_dim,
                           env.act_dim)
    task = train_loop.Task(
        init_state=lambda key: rollout.init_state(env, agent, run, key),
        train_step=rollout.make_train_step(env, agent, run),
        batch_fn=lambda step, rows: np.full((1,), step, np.int32)[rows],
        global_batch_size=1)
    return env, agent, run, task
