"""EARTH experiment: every (dataset, model) is trained through `lib.common.train_loop`.

For one dataset and one model the horizons × seeds copies are trained side by side
(lib/earth/training.py) in the stage runs/<dataset>/<model> (checkpoints, metrics.jsonl) and
evaluated (lib/earth/evaluation.py); after every dataset the top of the workdir gets
results.json, results.md, predictions.npz and plots/forecast_<dataset>_h<h>.png.
"""
from __future__ import annotations

import os
import time

import jax
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import report as common_report
from lib.common import train_loop
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.earth import data as data_lib, model as model_lib, report
from lib.earth.config_schema import KEYS, RENAMED_KEYS, check_files, validate
from lib.earth.evaluation import evaluate
from lib.earth.setup import build_model, load_dataset
from lib.earth.training import (EarlyStopClock, loop_config, make_task, selecting,
                             steps_per_epoch)

def run_one(forecaster, prep, config, stages: Stages, name: str, mesh) -> tuple[dict, dict, float]:
    """Train (or resume) one (dataset, model) in the stage `name` and evaluate it."""
    t0 = time.time()
    selection = None
    if getattr(forecaster, "trainable", True):
        task = make_task(forecaster, prep, config)
        loop = loop_config(prep, config)
        if selecting(config):   # best-validation copies; stop once every copy is out of patience
            budget = config.get("run", {}).get("stage_budget_s")   # run-time only
            clock = EarlyStopClock(stages.dir(name), time.monotonic if budget else None)
            deadline = time.monotonic() + budget if budget else 0.0
            result = train_loop.train(task, loop, workdir=stages.dir(name), mesh=mesh,
                                      deadline=deadline, clock=clock, on_log=clock.on_log)
            state = jax.device_get(result.state)
            params = state["best_params"]
            per_epoch = steps_per_epoch(prep, config)
            selection = {"best_epoch": [int(s) // per_epoch for s in state["best_step"]],
                         "best_val_mse": [float(v) for v in state["best_val"]],
                         "stopped_at_epoch": int(result.step) // per_epoch,
                         "max_epochs": int(config.select.max_epochs),
                         "patience": int(config.select.patience),
                         "stopped_by_budget": bool(result.stopped_by_deadline and not clock.done),
                         "steps_per_epoch": per_epoch}
            logging.info("%s: best epochs %s, stopped at epoch %d", name,
                         selection["best_epoch"], selection["stopped_at_epoch"])
        else:
            result = train_loop.train(task, loop, workdir=stages.dir(name), mesh=mesh)
            params = jax.device_get(result.state["params"])
    else:
        params = {}
    res, fc = evaluate(forecaster, params, prep, config)
    if selection is not None:
        res["selection"] = selection
    return res, fc, time.time() - t0


def run_dataset(ds: str, config, stages: Stages, mesh, saved: dict, plot_dir: str
                ) -> tuple[dict, dict, dict]:
    """Every model of the config on dataset `ds`: (info, results, seconds) per model; the
    test forecasts go into `saved` (predictions.npz), the plots into the workdir."""
    series, adj = load_dataset(ds, config)
    prep = data_lib.prepare(series, adj, train_frac=config.data.train_frac,
                            val_frac=config.data.val_frac, window=config.data.window,
                            horizons=config.data.horizons, negative=config.data.negative_counts,
                            rounding=config.data.get("split_rounding", "round"))
    info = dict(steps=int(series.shape[0]), regions=int(series.shape[1]),
                train_end=prep.train_end, val_end=prep.val_end)
    results, timing, fcs = {}, {}, {}
    for name in config.models:
        if name in model_lib.VARIANTS[1:] and ds not in config.ablation_datasets:
            continue
        guards.check_preempted(f"{ds}/{name}")
        forecaster = build_model(name, config, prep)
        res, fc, secs = run_one(forecaster, prep, config, stages, f"{ds}/{name}", mesh)
        results[name], timing[name], fcs[name] = res, secs, fc
        logging.info("%s / %s: test RMSE %s (%.0f s)", ds, name,
                     {h: f"{v['rmse']:.3f}" for h, v in res["test"].items()}, secs)
        for h, (t, p) in fc.items():
            saved[f"{ds}/{name}/h{h}"] = p
            saved[f"{ds}/targets/h{h}"] = t
    saved[f"{ds}/series"] = series
    if mesh_lib.is_primary() and config.eval.plots:
        for h in config.data.horizons:
            report.forecast_plot(os.path.join(plot_dir, f"forecast_{ds}_h{h}.png"), prep, ds,
                                 h, fcs)
    return info, results, timing


def train_and_evaluate(config, workdir: str):
    validate(config)
    check_files(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary,
               added=config_lib.added_of(KEYS), renamed=RENAMED_KEYS)
    stages = Stages(workdir, "runs")
    results, timing, info, saved = {}, {}, {}, {}
    t_start = time.time()
    for ds in config.datasets:
        info[ds], results[ds], timing[ds] = run_dataset(
            ds, config, stages, mesh, saved, os.path.join(workdir, wd.PLOTS))
        done = len(results) == len(config.datasets)
        out = {"tag": config.tag, "machine": common_report.machine(),
               "wall_s": time.time() - t_start, "complete": done, "datasets": info,
               "results": results, "train_eval_seconds": timing,
               "targets": report.targets(results, config),
               "horizons": list(config.data.horizons), "num_seeds": config.num_seeds,
               "num_steps": config.train.num_steps}
        guards.check_preempted("writing results.json")
        if primary:  # written after every dataset, so an interrupted run still has a table
            tmp = os.path.join(workdir, ".tmp_predictions.npz")   # never half-written
            np.savez_compressed(tmp, **saved)
            os.replace(tmp, os.path.join(workdir, "predictions.npz"))
            wd.write_text_atomic(os.path.join(workdir, "results.md"),
                                 report.results_markdown(results, config))
            wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), out)
    return out
