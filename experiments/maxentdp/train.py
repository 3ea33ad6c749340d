"""MaxEntDP vs SAC, end to end.

    config -> validate -> for env in config.envs, for algo in config.algos:
        lib.maxentdp.runs.train_one: the vmapped seeds' Task on lib.common.train_loop in the
        stage folder <workdir>/runs/<env>_<algo>/ (checkpoints, resume, NaN guard,
        metrics.jsonl); multigoal: goals reached and the critic at the start state
    -> results.json, results.md, plots/{returns_<env>,multigoal_actions,multigoal_goals}.png
       (results.json and results.md also after every chunk, marked "complete": false)

With `run.time_budget_s`, the process's wall-clock budget is shared out between the runs
(`run.time_share`, `runs.run_deadline`) and each run stops at a chunk boundary before its
deadline; such a run is recorded with `budget_stopped`, and rerunning the command (with any
budget: `run` is not part of the workdir's config identity) resumes it.
"""
from __future__ import annotations

import os
import time

import jax
from absl import logging

from lib.common import extras
from lib.common import config as config_lib, mesh as mesh_lib
from lib.common import guards, report as common_report, workdir as wd
from lib.maxentdp import config_schema, report
from lib.maxentdp.config_schema import optional_modules
from lib.maxentdp.runs import run_deadline, train_one

validate = config_schema.validate


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
