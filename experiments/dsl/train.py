"""Deep Sturm–Liouville vs a matched-parameter MLP: accuracy, low-data sweep, 2-D toy.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    config -> validate -> load every data set, scaled into Ω (before any training)
    -> with data.val_fraction > 0: a stratified validation split of the training rows
    -> for each data set: replicas = (training fraction × seed), each with its own stratified
       subsample of the training rows; for model in (dsl, mlp):
         all replicas trained at once in the stage runs/<set>/<model>: one jitted step
         vmapped over replicas (checkpoints, resume, metrics.jsonl per run, per-fraction
         loss/accuracy curves; with a validation split each replica keeps its
         best-validation-loss params, checked every eval.val_every steps) -> test accuracy
         of every replica (its selected params)
    -> 2-D toy (two moons): one DSL trained, its field lines, eigenfunctions and decision
       function plotted
    -> accuracy table, targets, plots -> results.json, results.md, plots/

The MLP has `mlp.depth` equal hidden layers whose width makes its parameter count closest to
the DSL's on that data set. Both models see the same batches, steps and optimiser (AdamW).
Rerunning the same command resumes unfinished runs and re-evaluates finished ones.
"""
from __future__ import annotations

import dataclasses
import os
import time

import numpy as np
from absl import logging

from lib.common import config as config_lib, mesh as mesh_lib, report as common_report
from lib.common import guards, train_loop, workdir as wd
from lib.common.stages import Stages
from lib.dsl import config_schema, data as data_lib, report, runs
from lib.dsl.training import (MODELS, RUN_SEED_STRIDE, Model, Plan, dsl_config, effective_batch,
                              frac_label, make_plan, make_task, predict, selected_params)

validate = config_schema.validate


def run_model(config, stages: Stages, mesh, ds: data_lib.Dataset, plan: Plan, kind: str) -> dict:
    """Train (or resume) every replica of one model on one data set; its summary
    (`guards.Preempted` on SIGTERM)."""
    run_dir = stages.dir(f"{ds.name}/{kind}")
    batch = effective_batch(config.optim.batch_size, mesh.shape[mesh_lib.DATA])
    model, task, seed = run_task(config, ds, plan, kind, batch)
    loop = dataclasses.replace(train_loop.LoopConfig.from_config(config.train), seed=seed)
    t0 = time.time()
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)
    return summarise(config, model, ds, plan, result.state, result.step, batch,
                     time.time() - t0)


def summarise(config, model: Model, ds: data_lib.Dataset, plan: Plan, state: dict, step: int,
              batch: int, train_s: float) -> dict:
    """Test accuracy per fraction (mean, sd, per seed) of every replica's selected params,
    sizes, steps, selected steps and (DSL) field-line statistics of one trained model."""
    params = selected_params(state)
    logits, lines = predict(model, params, ds.x_test, config.eval.chunk)
    acc = np.mean(np.argmax(logits, -1) == ds.y_test[None], axis=1)     # (R,)
    by_fraction = {}
    for g, f in enumerate(plan.fractions):
        a = acc[plan.group == g]
        by_fraction[frac_label(f)] = {
            "fraction": f, "n_train": int(plan.sizes[plan.group == g][0]),
            "acc": float(a.mean()), "acc_sd": float(a.std(ddof=1)) if a.size > 1 else 0.0,
            "acc_per_seed": a.tolist()}
    summary = {"num_params": model.num_params, "steps": step, "batch": batch,
               "train_s": train_s, "by_fraction": by_fraction}
    if "best_step" in state:
        best_step = np.asarray(state["best_step"])
        summary["selected_step"] = float(best_step.mean())
        summary["selected_step_per_replica"] = best_step.tolist()
    if model.kind == "mlp":
        summary["width"] = model.width
    else:
        summary["lines"] = lines
    logging.info("%s/%s: %s", ds.name, model.kind,
                 {k: f"{v['acc']:.4f}" for k, v in by_fraction.items()})
    return summary


def load_datasets(config) -> list[data_lib.Dataset]:
    """Every data set of the config scaled into Ω, with the validation split when
    data.val_fraction > 0 (held-out training rows for selection)."""
    m = config.model
    datasets = [data_lib.load(name, config.data, domain=m.domain, radius=m.radius,
                              seed=config.seed) for name in config.datasets]
    if config.data.get("val_fraction", 0) > 0:
        datasets = [data_lib.split_validation(ds, config.data.val_fraction,
                                               config.seed + data_lib.VALIDATION_STREAM)
                    for ds in datasets]
    return datasets


def run_task(config, ds: data_lib.Dataset, plan: Plan, kind: str, batch: int):
    """(model, task, seed) of one model's replicas, as `run_model` trains them."""
    model = Model(kind, config, ds.dim, ds.num_classes)
    seed = config.train.seed + RUN_SEED_STRIDE * config.seed
    task = make_task(model, ds, plan, config.optim[kind].lr, config.optim.weight_decay, batch,
                     seed, config.optim.clip, val_every=config.eval.get("val_every", 0),
                     num_steps=config.train.num_steps)
    return model, task, seed


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    dsl_config(config.model).check()
    t0 = time.time()
    datasets = load_datasets(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    stages = Stages(workdir, "runs")
    results: dict = {"datasets": {}}
    plot_dir = os.path.join(workdir, wd.PLOTS)
    for ds in datasets:
        plan = make_plan(ds.y_train, config.data.fractions, config.data.num_seeds,
                         config.data.min_per_class, config.seed)
        entry = {"n_train": len(ds.x_train), "n_test": len(ds.x_test), "dim": ds.dim,
                 "n_val": 0 if ds.x_val is None else len(ds.x_val),
                 "num_classes": ds.num_classes, "models": {}}
        for kind in config.get("models", MODELS):
            guards.check_preempted(f"{ds.name}/{kind}")
            entry["models"][kind] = run_model(config, stages, mesh, ds, plan, kind)
        results["datasets"][ds.name] = entry
        if primary and config.eval.plots:
            report.curve_plots(stages, ds.name, plan.fractions, entry, plot_dir)
        guards.check_preempted("writing results.json")
        if primary:   # partial results after every data set (complete = False until the end)
            wd.write_json_atomic(os.path.join(workdir, wd.RESULTS),
                                 {**results, "complete": False, "wall_s": time.time() - t0,
                                  "machine": common_report.machine()})
    if config.toy.enabled:
        guards.check_preempted("the toy run")
        results["toy"] = runs.toy(config, stages.dir("toy/dsl"), mesh,
                                  plot_dir if (primary and config.eval.plots) else None)
    results["targets"] = report.targets(results)
    results["machine"] = common_report.machine()
    results["wall_s"] = time.time() - t0
    results["complete"] = True
    guards.check_preempted("writing results.json")
    if primary:
        if config.eval.plots and results["datasets"]:
            report.sample_efficiency_plot(results, os.path.join(plot_dir,
                                                                "sample_efficiency.png"))
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results
