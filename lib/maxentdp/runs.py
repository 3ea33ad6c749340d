"""One (environment, algorithm) run of the MaxEntDP experiment on the train loop.

`train_one` trains (or resumes) the run's task (`training.make_task`) in the stage folder
`<workdir>/runs/<env>_<algo>` and returns its results.json entry; `run_deadline` shares a
process's wall-clock budget out.
"""
from __future__ import annotations

import time

import jax
import ml_collections
import numpy as np

from lib.common import metrics as metrics_lib, train_loop
from lib.common.stages import Stages
from lib.maxentdp import rollout
from lib.maxentdp.training import make_task, run_config
from lib.maxentdp.multigoal import multigoal_analysis


def run_dir(workdir: str, env_name: str, algo: str) -> str:
    """The stage folder of one run (`runs/<env>_<algo>`, the layout of older workdirs)."""
    return Stages(workdir, "runs").dir(f"{env_name}_{algo}")


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
    env, agent, run, task = make_task(config, env_name, algo)
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

