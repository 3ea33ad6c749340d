"""MaxEntDP vs SAC, end to end.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    config -> validate -> for env in config.envs, for algo in config.algos:
        Task (state = agent + replay buffer + environment of every seed, vmapped; one loop
        step = one chunk of `eval_every` environment steps with updates, then an
        evaluation) -> lib.common.train_loop.train in <workdir>/runs/<env>_<algo>/
        (checkpoints, resume, NaN guard, metrics.jsonl)
        multigoal: stochastic rollouts from the start state (goals reached) and action
        samples at the origin
    -> results.json, results.md, plots/{returns_<env>,multigoal_actions,multigoal_goals}.png
       (results.json and results.md also after every chunk, marked "complete": false)

With `run.time_budget_s`, the process's wall-clock budget is shared out between the runs
(`run.time_share`, in run order, over what is left when each run starts) and each run stops
at a chunk boundary before its deadline (`train_loop.train(..., deadline=...)`); such a run
is recorded with `budget_stopped` and the steps it reached, and rerunning the command (with
any budget: `run` is not part of the workdir's config identity) resumes it.

Why train_loop fits: RL has no dataset, so the loop's `batch` is only the step index; the
data are collected inside the jitted step (lax.scan over environment steps), and the
step key is the loop's key for that step, so resuming is exact as for SGD tasks.
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import extras
from lib.common import config as config_lib, mesh as mesh_lib, metrics as metrics_lib
from lib.common import guards, report as common_report, train_loop, workdir as wd
from lib.maxentdp import agent as agent_lib, config_schema, critics
from lib.maxentdp import diagnostics, envs, report
from lib.maxentdp import rollout
from lib.maxentdp.config_schema import optional_modules

validate = config_schema.validate


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


def _steps_per_sec(run_dir: str, run: rollout.RunConfig) -> float | None:
    rows = [r for r in metrics_lib.read_metrics(run_dir) if r.get("steps_per_sec", 0) > 0]
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


def partial_record(run_dir: str, env_name: str, algo: str, run: rollout.RunConfig,
                   wall: float) -> dict:
    """A run's entry from its metrics.jsonl while it is going on (per-seed evaluations are
    logged as `eval_return_seed<i>` after every chunk)."""
    keys = [f"eval_return_seed{i}" for i in range(run.num_seeds)]
    rows = [r for r in metrics_lib.read_metrics(run_dir) if all(k in r for k in keys)]
    evals = np.asarray([[r[k] for k in keys] for r in rows], np.float64).reshape(-1, run.num_seeds)
    alpha = [rows[-1]["alpha"]] if rows and "alpha" in rows[-1] else []
    return run_record(env_name, algo, run, evals, alpha, wall_s=wall, in_progress=True,
                      budget_stopped=False, env_steps_per_sec=_steps_per_sec(run_dir, run))


def train_one(config, workdir: str, env_name: str, algo: str, mesh,
              deadline: float | None = None, on_progress=None,
              clock=time.monotonic) -> dict:
    """Train (or resume) one (environment, agent) run, stopping at a chunk boundary before
    `deadline` (on `clock`'s scale; None = none); its results.json entry.
    `on_progress(entry)` after every logged chunk (progressive results; not after a SIGTERM,
    which raises `guards.Preempted` once the chunks done are checkpointed)."""
    env, agent, run, task = build(config, env_name, algo)
    run_dir = os.path.join(workdir, "runs", f"{env_name}_{algo}")
    t = config.train
    loop = train_loop.LoopConfig(num_steps=run.num_chunks, log_every=t.log_every,
                                 checkpoint_every=t.checkpoint_every,
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)
    t0 = time.time()
    progress = None
    if on_progress is not None:
        progress = lambda done: on_progress(
            partial_record(run_dir, env_name, algo, run, time.time() - t0))
    res = train_loop.train(task, loop, workdir=run_dir, mesh=mesh, deadline=deadline,
                           clock=clock, on_log=progress)
    wall = time.time() - t0
    extra = {"wall_s": wall, "resumed_from": res.resumed_from,
             "budget_stopped": res.stopped_by_deadline,
             "env_steps_per_sec": _steps_per_sec(run_dir, run)}
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


def write_results(config, workdir: str, runs: dict, start: float, *, complete: bool,
                  plots: bool) -> dict:
    """results.json (+ results.md, and the plots when `plots`) from the runs so far; called
    after every chunk, so that a process stopped by its budget or killed still leaves usable
    results; never after a SIGTERM (`guards.Preempted`: nothing new is published)."""
    guards.check_preempted("writing results.json")
    results = {"tag": config.tag, "complete": complete, "runs": runs,
               "targets": report.targets(runs), "machine": common_report.machine(),
               "wall_s": time.monotonic() - start,
               "time_budget_s": config.run.time_budget_s,
               "budget_stopped": [k for k, r in runs.items() if r.get("budget_stopped")]}
    if not mesh_lib.is_primary():
        return results
    if plots:
        results["plots"] = report.plots(runs, os.path.join(workdir, wd.PLOTS))
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
    # The seeds are vmapped inside one jitted step on one device; the batch is a step index.
    mesh = mesh_lib.make_mesh(1, 1, devices=jax.local_devices()[:1])
    start = time.monotonic()
    pairs = [(e, a) for e in config.envs for a in config.algos]
    runs = {}
    for i, (env_name, algo) in enumerate(pairs):
        guards.check_preempted(f"run {env_name}_{algo}")
        name = f"{env_name}_{algo}"
        logging.info("training %s on %s", algo, env_name)
        progress = lambda entry, name=name: write_results(
            config, workdir, {**runs, name: entry}, start, complete=False, plots=False)
        runs[name] = train_one(config, workdir, env_name, algo, mesh,
                               run_deadline(config, pairs[i:], start), progress)
        write_results(config, workdir, runs, start, complete=False, plots=True)
    results = write_results(config, workdir, runs, start, complete=True, plots=True)
    logging.info("results:\n%s", report.tables(results))
    return results
