"""Adam under L-smoothness and the ABC inequality: the numerical companion, end to end.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests and
notebooks); `main.py` only parses flags. Nothing is learned: every "run" is one
independent optimiser trajectory on a known objective, and `config.num_runs` of them
(1,024 in `quick`) are vmapped and sharded over the mesh's "data" axis. Data flow:

    config -> validate -> mesh
      rate:        for each run '<problem>-<noise>/<method>' and horizon T: the runs'
                   time-averaged and grid ‖∇f(θ_t)‖² (lib.adam_abc.simulate) -> avg/min/last
                   of E‖∇f‖² against T, log-log slopes with bootstrap intervals
      asymptotic:  Robbins–Monro runs of num_steps updates -> L1 curve, fraction below δ,
                   tail-supremum quantiles, late L1 slope
    -> targets (lib.adam_abc.report) -> workdir: config.json, results.json, results.md,
       plots/*.png

Rerunning on the same workdir recomputes everything (minutes) and overwrites.
"""
from __future__ import annotations

import os
import time

import numpy as np
from absl import logging

from lib.adam_abc import config_schema, plots, rates, report, settings, simulate
from lib.common import config as config_lib, mesh as mesh_lib, report as common_report, workdir as wd

validate = config_schema.validate


def _runs(block) -> list[tuple[str, str]]:
    """The (setting, method) pairs of a part: settings × methods, then the extra runs."""
    pairs = [(s, m) for s in block.settings for m in block.methods]
    pairs += [settings.parse_run(x) for x in block.extra]
    return list(dict.fromkeys(pairs))


def run_rate(config, mesh) -> dict:
    """Finite-horizon sweeps: the rate summary of every run (see `rates.rate_summary`)."""
    r = config.rate
    out = {}
    for setting, method in _runs(r):
        start = time.perf_counter()
        problem, oracle = settings.build_setting(setting, config)
        runner = simulate.make_runner(problem, oracle, settings.rate_optimizer(method, config),
                                      mesh)
        records, hps = [], []
        for horizon in r.horizons:
            h = settings.rate_hparams(method, horizon, problem, config)
            keys = simulate.run_keys(config.seed, config.num_runs, "rate", setting, method,
                                     horizon, mesh=mesh)
            times = np.arange(1, r.records + 1) * (horizon // r.records)
            rec = runner(simulate.hparams(**h), keys, times)
            records.append({k: simulate.to_host(v) for k, v in rec.items()})
            hps.append(h)
        summary = rates.rate_summary(r.horizons, records, r.num_boot, config.seed)
        summary.update(oracle=oracle.name, abc={"A": oracle.a, "B": oracle.b, "C": oracle.c},
                       smoothness=problem.smoothness, f_star=problem.f_star, hparams=hps,
                       wall_s=time.perf_counter() - start)
        out[f"{setting}/{method}"] = summary
        logging.info("rate %s/%s: slope avg %.3f, min %.3f (%.1f s)", setting, method,
                     summary["slope_avg"], summary["slope_min"], summary["wall_s"])
    return {"runs": out, "horizons": list(r.horizons), "num_runs": config.num_runs,
            "theory_slope": r.theory_slope, "tolerance": r.tolerance}


def record_times(num_steps: int, records: int) -> np.ndarray:
    """0 and about `records` − 1 log-spaced distinct integer times ending at num_steps."""
    grid = np.unique(np.round(np.logspace(0, np.log10(num_steps), records - 1)).astype(int))
    return np.concatenate([[0], grid])


def run_asymptotic(config, mesh) -> dict:
    """Robbins–Monro (and control) runs: the last-iterate summaries of every run."""
    s = config.asymptotic
    times = record_times(s.num_steps, s.records)
    out = {}
    for setting, method in _runs(s):
        start = time.perf_counter()
        problem, oracle = settings.build_setting(setting, config)
        optimizer = settings.asymptotic_optimizer(method, problem, config)
        runner = simulate.make_runner(problem, oracle, lambda _, opt=optimizer: opt, mesh)
        keys = simulate.run_keys(config.seed, config.num_runs, "asymptotic", setting, method,
                                 mesh=mesh)
        rec = {k: simulate.to_host(v) for k, v in runner({}, keys, times).items()}
        summary = rates.asymptotic_summary(times, rec, s.threshold, s.late_from)
        summary.update(oracle=oracle.name, abc={"A": oracle.a, "B": oracle.b, "C": oracle.c},
                       wall_s=time.perf_counter() - start)
        out[f"{setting}/{method}"] = summary
        logging.info("asymptotic %s/%s: late L1 slope %.3f, P(<δ) at T %.3f (%.1f s)", setting,
                     method, summary["late_slope"], summary["frac_below"][-1], summary["wall_s"])
    return {"runs": out, "num_runs": config.num_runs, **{k: s[k] for k in (
        "num_steps", "alpha0", "power", "offset", "beta2_c", "beta2_power", "control_alpha",
        "control_beta2", "threshold", "late_from", "min_decay")}}


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md and plots/ to `workdir`."""
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    mesh_lib.check_batch_divisible(config.num_runs, mesh)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    t0 = time.perf_counter()
    results: dict = {}
    for part, runner in (("rate", run_rate), ("asymptotic", run_asymptotic)):
        if part in config.parts:
            start = time.perf_counter()
            results[part] = runner(config, mesh)
            results[part]["wall_s"] = time.perf_counter() - start
    results["targets"] = report.targets(results)      # target records of the parts that ran
    results["wall_s"] = time.perf_counter() - t0
    results["machine"] = common_report.machine()
    if primary:
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
        if config.eval.plots:
            plots.write_plots(results, os.path.join(workdir, wd.PLOTS))
    return results
