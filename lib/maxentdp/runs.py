"""One (environment, algorithm) run of the MaxEntDP experiment on the train loop.

`build` gives its `train_loop.Task`: the state is agent + replay buffer + environment of
every seed (vmapped); one loop step is one chunk of `eval_every` environment steps with
updates, then an evaluation; the loop's batch is only the step index, so resuming is exact.
`train_one` trains (or resumes) it in the stage folder `<workdir>/runs/<env>_<algo>` and
returns its results.json entry; `run_deadline` shares a process's wall-clock budget out.
"""
from __future__ import annotations

import time

import jax
import ml_collections
import numpy as np

from lib.common import metrics as metrics_lib, train_loop
from lib.common.stages import Stages
from lib.maxentdp import agent as agent_lib
from lib.maxentdp import envs, rollout
from lib.maxentdp.multigoal import multigoal_analysis


def run_dir(workdir: str, env_name: str, algo: str) -> str:
    """The stage folder of one run (`runs/<env>_<algo>`, the layout of older workdirs)."""
    return Stages(workdir, "runs").dir(f"{env_name}_{algo}")


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


def build(config, env_name: str, algo: str):
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


def _steps_per_sec(directory: str, run: rollout.RunConfig) -> float | None:
    rows = [r for r in metrics_lib.read_metrics(directory) if r.get("steps_per_sec", 0) > 0]
    if not rows:
        return None
    return rows[-1]["steps_per_sec"] * run.chunk_len * run.num_seeds


def run_record(env_name: str, algo: str, run: rollout.RunConfig, evals: np.ndarray,
               alpha: list, **extra) -> dict:
    """The results.json entry of one run from its evaluations `evals` (chunks done, S)."""
    done = evals.shape[0]
    multi = run.num_seeds > 1 and done > 0
    return {"env": env_name, "algo": algo, "num_seeds": run.num_seeds,
            "planned_env_steps": run.env_steps,
            "env_steps": [(i + 1) * run.chunk_len for i in range(done)],
            "eval_return": evals.T.tolist(),
            "eval_return_mean": evals.mean(1).tolist(),
            "eval_return_std": evals.std(1, ddof=1).tolist() if multi else None,
            "final_return_mean": float(evals[-1].mean()) if done else None,
            "final_return_std": (float(evals[-1].std(ddof=1)) if multi else 0.0) if done else None,
            "final_alpha": alpha, **extra}


def partial_record(directory: str, env_name: str, algo: str, run: rollout.RunConfig,
                   wall: float) -> dict:
    """A run's entry from its metrics.jsonl while it is going on (per-seed evaluations are
    logged as `eval_return_seed<i>` after every chunk)."""
    keys = [f"eval_return_seed{i}" for i in range(run.num_seeds)]
    rows = [r for r in metrics_lib.read_metrics(directory) if all(k in r for k in keys)]
    evals = np.asarray([[r[k] for k in keys] for r in rows], np.float64).reshape(-1, run.num_seeds)
    alpha = [rows[-1]["alpha"]] if rows and "alpha" in rows[-1] else []
    return run_record(env_name, algo, run, evals, alpha, wall_s=wall, in_progress=True,
                      budget_stopped=False, env_steps_per_sec=_steps_per_sec(directory, run))


def train_one(config, workdir: str, env_name: str, algo: str, mesh,
              deadline: float | None = None, on_progress=None,
              clock=time.monotonic) -> dict:
    """Train (or resume) one (environment, agent) run, stopping at a chunk boundary before
    `deadline` (on `clock`'s scale; None = none); its results.json entry.
    `on_progress(entry)` after every logged chunk (progressive results; not after a SIGTERM,
    which raises `guards.Preempted` once the chunks done are checkpointed)."""
    env, agent, run, task = build(config, env_name, algo)
    directory = run_dir(workdir, env_name, algo)
    t = config.train
    loop = train_loop.LoopConfig(num_steps=run.num_chunks, log_every=t.log_every,
                                 checkpoint_every=t.checkpoint_every,
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)
    t0 = time.time()
    progress = None
    if on_progress is not None:
        progress = lambda done: on_progress(
            partial_record(directory, env_name, algo, run, time.time() - t0))
    res = train_loop.train(task, loop, workdir=directory, mesh=mesh, deadline=deadline,
                           clock=clock, on_log=progress)
    wall = time.time() - t0
    extra = {"wall_s": wall, "resumed_from": res.resumed_from,
             "budget_stopped": res.stopped_by_deadline,
             "env_steps_per_sec": _steps_per_sec(directory, run)}
    if res.step == 0:                     # the budget was spent before this run could start
        return run_record(env_name, algo, run, np.zeros((0, run.num_seeds)), [], **extra)
    state = res.state
    done = int(jax.device_get(state["chunk"]))
    evals = np.asarray(jax.device_get(state["evals"]))[:done]          # (chunks done, S)
    alpha = np.exp(np.asarray(state["seeds"]["agent"]["log_alpha"])).tolist()
    out = run_record(env_name, algo, run, evals, alpha, **extra)
    if env_name == "multigoal":
        out["multigoal"] = multigoal_analysis(config, env, agent, state["seeds"]["agent"],
                                              jax.random.key(t.seed + 7))
    return out


def run_deadline(config, pairs: list, start: float) -> float | None:
    """The deadline (time.monotonic) of the first of the remaining (env, algo) `pairs`: its
    share (`run.time_share.<algo>`, normalised over the remaining runs) of the time left of
    the process's `run.time_budget_s` counted from `start`; None without a budget."""
    total = config.run.time_budget_s
    if total is None:
        return None
    now = time.monotonic()
    left = max(start + float(total) - now, 0.0)
    shares = [config.run.time_share[a] for _, a in pairs]
    return now + left * shares[0] / sum(shares)


def metrics_entry(workdir: str, config: dict, entry: dict) -> dict:
    """A run's results entry rebuilt from its metrics.jsonl (all evaluated chunks), keeping
    how the stored entry says the run ended."""
    run = run_config(ml_collections.ConfigDict(config), entry["env"])
    new = partial_record(run_dir(workdir, entry["env"], entry["algo"]), entry["env"],
                         entry["algo"], run, entry["wall_s"])
    new.update(in_progress=False, budget_stopped=entry.get("budget_stopped", False),
               preempted=bool(entry.get("preempted") or entry.get("in_progress")))
    return new

