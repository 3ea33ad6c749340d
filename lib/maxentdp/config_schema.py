"""What a MaxEntDP experiment config may hold, and the checks run before any compute.

Blocks:
  envs, algos              which environments and which agents (every pair is one run)
  agent.*                  shared RL settings (critics, optimisers, batch, γ, τ, UTD)
  diffusion.*              the diffusion policy (steps T, bound, network, QNE candidates K,
                           log-prob draws, evaluation candidates N, entropy in the backup)
  env.<name>.*             per environment: its parameters, the temperature α, which
                           algorithms tune α automatically, seeds, steps and evaluation
  multigoal_eval.*         stochastic rollouts and action samples at the start state
  run.*                    wall-clock budget of the whole process (None = off) and how it
                           is shared between the agents (deadlines of
                           `lib.common.train_loop.train`); run-time only, so a rerun may
                           change it (`lib.common.workdir.prepare`)
  train.*                  checkpoints and logging of `lib.common.train_loop` (no
                           `num_steps`: each run's number of loop steps is
                           env.<name>.env_steps / env.<name>.eval_every)
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (Bool, Choice, ConfigError, Float, Int, Ints, Names, Optional,
                               Rule, Str)
from lib.maxentdp.agent import ALGOS, BACKUPS
from lib.maxentdp.diffusion_policy import BOUNDS
from lib.maxentdp.envs import BRAX_TASKS

ENVS = ("multigoal", "pendulum", "hopper", "halfcheetah")
BRAX_BACKENDS = ("positional", "generalized", "spring", "mjx")
assert set(ENVS[2:]) <= set(BRAX_TASKS)


def _run_rules(name: str) -> dict[str, Rule]:
    p = f"env.{name}."
    return {p + "horizon": Int(lo=1), p + "alpha": Float(lo=0.0, lo_open=True),
            p + "auto_alpha": Names(ALGOS, allow_empty=True), p + "num_seeds": Int(lo=1),
            p + "env_steps": Int(lo=1), p + "eval_every": Int(lo=1), p + "start_steps": Int(lo=1),
            p + "eval_episodes": Int(lo=1), p + "replay_capacity": Int(lo=1)}


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "envs": Names(ENVS),
    "algos": Names(ALGOS),
    "agent.gamma": Float(lo=0.0, hi=1.0, hi_open=True),
    "agent.tau": Float(lo=0.0, hi=1.0, lo_open=True),
    "agent.batch_size": Int(lo=1),
    "agent.utd": Int(lo=1),
    "agent.critic_hidden": Ints(lo=1),
    "agent.actor_hidden": Ints(lo=1),
    "agent.critic_lr": Float(lo=0.0, lo_open=True),
    "agent.actor_lr": Float(lo=0.0, lo_open=True),
    "agent.alpha_lr": Float(lo=0.0, lo_open=True),
    "agent.actor_cosine": Bool(),
    "agent.backup": Choice(BACKUPS),
    "agent.backup_samples": Int(lo=1),
    "diffusion.steps": Int(lo=1),
    "diffusion.bound": Choice(BOUNDS),
    "diffusion.fourier_dim": Int(lo=2),
    "diffusion.time_hidden": Ints(lo=1),
    "diffusion.eps_hidden": Ints(lo=1),
    "diffusion.qne_samples": Int(lo=1),
    "diffusion.logprob_draws": Int(lo=1),
    "diffusion.eval_candidates": Int(lo=1),
    "diffusion.backup_entropy": Bool(),
    **_run_rules("multigoal"),
    "env.multigoal.goal_radius": Float(lo=0.0, lo_open=True),
    "env.multigoal.threshold": Float(lo=0.0, lo_open=True),
    "env.multigoal.action_cost": Float(lo=0.0),
    "env.multigoal.distance_cost": Float(lo=0.0),
    "env.multigoal.goal_reward": Float(),
    "env.multigoal.init_std": Float(lo=0.0),
    "env.multigoal.bound": Float(lo=0.0, lo_open=True),
    **_run_rules("pendulum"),
    **_run_rules("hopper"),
    "env.hopper.backend": Choice(BRAX_BACKENDS),
    **_run_rules("halfcheetah"),
    "env.halfcheetah.backend": Choice(BRAX_BACKENDS),
    "multigoal_eval.rollouts": Int(lo=1),
    "multigoal_eval.action_samples": Int(lo=2),
    "run.time_budget_s": Optional(Float(lo=0.0, lo_open=True)),
    "run.time_share.maxentdp": Float(lo=0.0, lo_open=True),
    "run.time_share.sac": Float(lo=0.0, lo_open=True),
    "train.log_every": Int(lo=1),
    "train.checkpoint_every": Int(lo=1),
    "train.keep_checkpoints": Int(lo=1),
    "train.seed": Int(lo=0),
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
    for name in ENVS:
        e = config.env[name]
        if e.env_steps % e.eval_every:
            raise ConfigError(f"config key 'env.{name}.env_steps' = {e.env_steps} is not allowed; "
                              f"it must be a multiple of 'env.{name}.eval_every' = {e.eval_every}")
        if e.start_steps >= e.env_steps:
            raise ConfigError(f"config key 'env.{name}.start_steps' = {e.start_steps} is not "
                              f"allowed; it must be below 'env.{name}.env_steps' = {e.env_steps} "
                              "(no learning would happen)")


def _check_log_every(config: ml_collections.ConfigDict) -> None:
    if config.train.log_every != 1:
        raise ConfigError(f"config key 'train.log_every' = {config.train.log_every} is not "
                          "allowed; it must be 1 (each chunk's evaluation is its own "
                          "metrics.jsonl row: a longer interval would average evaluations in "
                          "the progressive results and in tools/maxentdp_results.py "
                          "--from_metrics)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross, _check_log_every))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    out = [("gymnax", "rl", "env 'pendulum'")] if "pendulum" in config.envs else []
    brax = [e for e in config.envs if e in BRAX_TASKS]
    return out + ([("brax", "rl", f"envs {brax}")] if brax else [])
