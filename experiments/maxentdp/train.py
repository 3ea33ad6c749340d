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

from lib.common import config as config_lib, mesh as mesh_lib, metrics as metrics_lib
from lib.common import report as common_report, train_loop, workdir as wd
from lib.maxentdp import agent as agent_lib, config_schema, critics, diagnostics, envs, report
from lib.maxentdp import rollout

validate = config_schema.validate


def agent_config(config, env_name: str, algo: str, num_updates: int) -> agent_lib.AgentConfig:
    a, d, e = config.agent, config.diffusion, config.env[env_name]
    return agent_lib.AgentConfig(
        algo=algo, alpha=e.alpha, auto_alpha=algo in tuple(e.auto_alpha), gamma=a.gamma,
        tau=a.tau, batch_size=a.batch_size, critic_hidden=tuple(a.critic_hidden),
        actor_hidden=tuple(a.actor_hidden), critic_lr=a.critic_lr, actor_lr=a.actor_lr,
        alpha_lr=a.alpha_lr, actor_cosine_steps=num_updates if a.actor_cosine else 0,
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


def train_one(config, workdir: str, env_name: str, algo: str, mesh) -> dict:
    env, agent, run, task = build(config, env_name, algo)
    run_dir = os.path.join(workdir, "runs", f"{env_name}_{algo}")
    t = config.train
    loop = train_loop.LoopConfig(num_steps=run.num_chunks, log_every=t.log_every,
                                 checkpoint_every=t.checkpoint_every,
                                 keep_checkpoints=t.keep_checkpoints, seed=t.seed)
    t0 = time.time()
    res = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)
    wall = time.time() - t0
    if res.preempted:
        raise SystemExit(0)
    state = res.state
    evals = np.asarray(jax.device_get(state["evals"]))                   # (chunks, S)
    out = {"env": env_name, "algo": algo, "num_seeds": run.num_seeds,
           "env_steps": [(i + 1) * run.chunk_len for i in range(run.num_chunks)],
           "eval_return": evals.T.tolist(),
           "eval_return_mean": evals.mean(1).tolist(),
           "eval_return_std": evals.std(1, ddof=1).tolist() if run.num_seeds > 1 else None,
           "final_return_mean": float(evals[-1].mean()),
           "final_return_std": float(evals[-1].std(ddof=1)) if run.num_seeds > 1 else 0.0,
           "final_alpha": np.exp(np.asarray(state["seeds"]["agent"]["log_alpha"])).tolist(),
           "wall_s": wall, "resumed_from": res.resumed_from,
           "env_steps_per_sec": _steps_per_sec(run_dir, run)}
    if env_name == "multigoal":
        out["multigoal"] = multigoal_analysis(config, env, agent, state["seeds"]["agent"],
                                              jax.random.key(t.seed + 7))
    return out


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
    # The seeds are vmapped inside one jitted step on one device; the batch is a step index.
    mesh = mesh_lib.make_mesh(1, 1, devices=jax.local_devices()[:1])
    start = time.time()
    runs = {}
    for env_name in config.envs:
        for algo in config.algos:
            logging.info("training %s on %s", algo, env_name)
            runs[f"{env_name}_{algo}"] = train_one(config, workdir, env_name, algo, mesh)
    results = {"tag": config.tag, "runs": runs, "targets": report.targets(runs),
               "machine": common_report.machine(), "wall_s": time.time() - start}
    if mesh_lib.is_primary():
        results["plots"] = report.plots(runs, os.path.join(workdir, wd.PLOTS))
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        with open(os.path.join(workdir, "results.md"), "w") as f:
            f.write(report.tables(results) + "\n")
        logging.info("results:\n%s", report.tables(results))
    return results
