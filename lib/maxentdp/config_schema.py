"""What a MaxEntDP experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/maxentdp file states only what
differs, through `config(overrides)`.

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
from lib.common.config import (REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names,
                               Optional, Str)

ALGOS = ("maxentdp", "sac")
BACKUPS = ("policy", "softmax")
BOUNDS = ("tanh", "clip")
BRAX_TASKS = ("hopper", "halfcheetah", "walker2d", "ant", "inverted_pendulum", "reacher")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"ALGOS": "lib.maxentdp.agent:ALGOS", "BACKUPS": "lib.maxentdp.agent:BACKUPS",
           "BOUNDS": "lib.maxentdp.diffusion_policy:BOUNDS",
           "BRAX_TASKS": "lib.maxentdp.envs:BRAX_TASKS"}
ENVS = ("multigoal", "pendulum", "hopper", "halfcheetah")
BRAX_BACKENDS = ("positional", "generalized", "spring", "mjx")
assert set(ENVS[2:]) <= set(BRAX_TASKS)

# Multi-goal α = 10 for both agents: soft Q-learning's multi-goal example (the source of this
# task, haarnoja/softqlearning examples/multigoal_sql.py) trains this very environment with
# reward_scale = 0.1, i.e. α = 10 at reward scale 1. At α = 1 the learned critic's gaps
# between goal directions at the start state are 5-30 α (README, "Diagnosis"), so exp(Q/α)
# has a single mode whatever the policy class.
MULTIGOAL_ALPHA = 10.0


def _run_keys(name: str, *, horizon: int, alpha: float, auto_alpha: tuple, num_seeds: int,
              env_steps: int, eval_every: int, start_steps: int, eval_episodes: int,
              replay_capacity: int) -> dict[str, Key]:
    """An environment's run keys (env.<name>.*) with their defaults."""
    p = f"env.{name}."
    return {p + "horizon": Key(horizon, Int(lo=1)),
            p + "alpha": Key(alpha, Float(lo=0.0, lo_open=True)),
            p + "auto_alpha": Key(auto_alpha, Names(ALGOS, allow_empty=True)),
            p + "num_seeds": Key(num_seeds, Int(lo=1)),
            p + "env_steps": Key(env_steps, Int(lo=1)),
            p + "eval_every": Key(eval_every, Int(lo=1)),
            p + "start_steps": Key(start_steps, Int(lo=1)),
            p + "eval_episodes": Key(eval_episodes, Int(lo=1)),
            p + "replay_capacity": Key(replay_capacity, Int(lo=1))}


def _brax_keys(name: str, alpha: float) -> dict[str, Key]:
    return {**_run_keys(name, horizon=1000, alpha=alpha, auto_alpha=("sac",), num_seeds=5,
                        env_steps=20_000, eval_every=5_000, start_steps=5_000, eval_episodes=2,
                        replay_capacity=20_000),
            f"env.{name}.backend": Key("positional", Choice(BRAX_BACKENDS))}


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "envs": Key(("multigoal", "pendulum"), Names(ENVS)),
    "algos": Key(("maxentdp", "sac"), Names(ALGOS)),
    "agent.gamma": Key(0.99, Float(lo=0.0, hi=1.0, hi_open=True)),
    "agent.tau": Key(0.005, Float(lo=0.0, hi=1.0, lo_open=True)),
    "agent.batch_size": Key(64, Int(lo=1)),
    "agent.utd": Key(1, Int(lo=1)),
    "agent.critic_hidden": Key((64, 64), Ints(lo=1)),
    "agent.actor_hidden": Key((64, 64), Ints(lo=1)),
    "agent.critic_lr": Key(3e-4, Float(lo=0.0, lo_open=True)),
    "agent.actor_lr": Key(3e-4, Float(lo=0.0, lo_open=True)),
    "agent.alpha_lr": Key(3e-4, Float(lo=0.0, lo_open=True)),
    "agent.actor_cosine": Key(False, Bool()),
    "agent.backup": Key("policy", Choice(BACKUPS)),
    "agent.backup_samples": Key(64, Int(lo=1)),
    "diffusion.steps": Key(10, Int(lo=1)),
    "diffusion.bound": Key("tanh", Choice(BOUNDS)),
    "diffusion.fourier_dim": Key(16, Int(lo=2)),
    "diffusion.time_hidden": Key((32,), Ints(lo=1)),
    "diffusion.eps_hidden": Key((64, 64), Ints(lo=1)),
    "diffusion.qne_samples": Key(64, Int(lo=1)),
    "diffusion.logprob_draws": Key(4, Int(lo=1)),
    "diffusion.eval_candidates": Key(10, Int(lo=1)),
    "diffusion.backup_entropy": Key(True, Bool()),
    **_run_keys("multigoal", horizon=30, alpha=MULTIGOAL_ALPHA, auto_alpha=(), num_seeds=5,
                env_steps=10_000, eval_every=1_000, start_steps=1_000, eval_episodes=10,
                replay_capacity=10_000),
    "env.multigoal.goal_radius": Key(5.0, Float(lo=0.0, lo_open=True)),
    "env.multigoal.threshold": Key(1.0, Float(lo=0.0, lo_open=True)),
    "env.multigoal.action_cost": Key(30.0, Float(lo=0.0)),
    "env.multigoal.distance_cost": Key(1.0, Float(lo=0.0)),
    "env.multigoal.goal_reward": Key(10.0, Float()),
    "env.multigoal.init_std": Key(0.1, Float(lo=0.0)),
    "env.multigoal.bound": Key(7.0, Float(lo=0.0, lo_open=True)),
    **_run_keys("pendulum", horizon=200, alpha=0.1, auto_alpha=("sac",), num_seeds=5,
                env_steps=5_000, eval_every=1_000, start_steps=1_000, eval_episodes=5,
                replay_capacity=5_000),
    **_brax_keys("hopper", 0.05),
    **_brax_keys("halfcheetah", 0.2),
    "multigoal_eval.rollouts": Key(100, Int(lo=1)),
    "multigoal_eval.action_samples": Key(500, Int(lo=2)),
    # The process's wall-clock budget (None = off) and the shares of it given to the runs of
    # each agent, in order (lib/maxentdp/runs.py: run_deadline, deadlines of train_loop.train).
    # Run-time only: a rerun may change it and still resume (lib/common/workdir.py).
    "run.time_budget_s": Key(None, Optional(Float(lo=0.0, lo_open=True))),
    "run.time_share.maxentdp": Key(0.5, Float(lo=0.0, lo_open=True)),
    "run.time_share.sac": Key(0.5, Float(lo=0.0, lo_open=True)),
    "train.log_every": Key(1, Int(lo=1)),
    "train.checkpoint_every": Key(1, Int(lo=1)),
    # quick keeps every chunk's checkpoint (experiments/maxentdp/diagnose_multigoal.py)
    "train.keep_checkpoints": Key(10, Int(lo=1)),
    "train.seed": Key(0, Int(lo=0)),
}


config = config_lib.config_builder(KEYS, "lib/maxentdp/config_schema.py")


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
                          "the progressive results and in tools/results.py --paper=maxentdp "
                          "--from_metrics)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross, _check_log_every))


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    out = [("gymnax", "rl", "env 'pendulum'")] if "pendulum" in config.envs else []
    brax = [e for e in config.envs if e in BRAX_TASKS]
    return out + ([("brax", "rl", f"envs {brax}")] if brax else [])
