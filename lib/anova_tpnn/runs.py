"""One data set × replica mode × model of the ANOVA-TPNN experiment: train (or resume) R
vmapped replicas in the stage `runs/<set>/<mode>/<model>` and evaluate them; the EBM
reference replicas; the data sets of a config, checked before any compute."""
from __future__ import annotations

import dataclasses
import json
import os
import time

import jax
import numpy as np
from absl import logging

from lib.anova_tpnn import baselines, data as data_lib, purify
from lib.anova_tpnn.evaluation import (evaluate_replicas, frozen_constants, purified_scores,
                                       summarise, test_metric)
from lib.anova_tpnn.model import component_names
from lib.anova_tpnn.training import budget, effective_batch, make_task, selected_params
from lib.common import mesh as mesh_lib, train_loop, workdir as wd
from lib.common.stages import Stages


def load_datasets(config) -> dict[str, data_lib.Dataset]:
    """Every data set of the config, checked against the interaction order (before compute)."""
    out = {}
    for name in config.datasets:
        ds = data_lib.load(name, config.data, config.seed)
        if config.model.max_order > ds.num_features:
            raise ValueError(f"model.max_order = {config.model.max_order} exceeds the "
                             f"{ds.num_features} features of data set {name!r}")
        out[name] = ds
    return out


def purification_rows(config, ds: data_lib.Dataset) -> tuple[np.ndarray, np.ndarray,
                                                                np.ndarray] | None:
    """(grid (M, p), design indices (M², p), design rows (M², p)) of the purified scores
    (`lib.anova_tpnn.purify`, M the smallest prime >= eval.purify_grid and p), or None
    when eval.purify_grid = 0."""
    if config.eval.get("purify_grid", 0) <= 0:
        return None
    m = purify.grid_size(config.eval.purify_grid, ds.num_features)
    grid = purify.quantile_grid(ds.x_train, m)
    idx = purify.design(ds.num_features, m)
    return grid, idx, purify.design_points(grid, idx).astype(np.float32)


def run_model(config, stages: Stages, mesh, ds: data_lib.Dataset, mode: str, name: str,
              weights: np.ndarray) -> tuple[dict, np.ndarray | None]:
    """Train (or resume) R replicas of one model and evaluate them; returns (summary,
    components (R, N, C) or None); `guards.Preempted` on SIGTERM."""
    model = baselines.build(name, ds.num_features, config.model)
    run_dir = stages.dir(f"{ds.name}/{mode}/{name}")
    batch = effective_batch(config.batch_size, len(ds.x_train), mesh.shape[mesh_lib.DATA])
    seed = config.train.seed + 7919 * config.seed + (0 if mode == "seed" else 1)
    task = make_task(model, name, ds, weights, config, batch, seed)
    num_steps, _ = budget(config, len(ds.x_train), batch)
    loop = dataclasses.replace(train_loop.LoopConfig.from_config(config.train), seed=seed,
                               num_steps=num_steps)
    t0 = time.time()
    result = train_loop.train(task, loop, workdir=run_dir, mesh=mesh)
    params = selected_params(result.state)
    consts = frozen_constants(model, params, ds.x_train, weights)
    if mesh_lib.is_primary() and jax.tree.leaves(consts):
        np.savez(os.path.join(run_dir, "frozen_constants.npz"),
                 **{f"order_{k}": np.asarray(v) for k, v in jax.device_get(consts).items()})
    pur = purification_rows(config, ds)
    n_all = len(ds.x_train) + len(ds.x_test)
    x_all = np.concatenate([ds.x_train, ds.x_test] + ([pur[2]] if pur else []))
    has_comps = baselines.HAS_COMPONENTS[name]
    out, comps, icpt = evaluate_replicas(model, params, consts, x_all, config.eval.chunk,
                                         has_comps)
    metric = test_metric(ds.task, out[:, len(ds.x_train):n_all], ds.y_test, ds.y_std)
    names = component_names(ds.num_features, config.model.max_order)
    summary = summarise(ds, metric, None if comps is None else comps[:, :n_all], names)
    if pur and comps is not None:
        summary.update(purified_scores(ds, pur, comps[:, n_all:], icpt[:, n_all], names))
        comps = comps[:, :n_all]
    summary.update(train_s=time.time() - t0, steps=result.step, batch=batch,
                   final_loss=_last_loss(run_dir))
    if "best_step" in result.state:
        best_step, best_val = jax.device_get((result.state["best_step"],
                                              result.state["best_val"]))
        summary.update(selected_step=float(np.mean(best_step)),
                       selected_step_per_replica=np.asarray(best_step),
                       val_loss=float(np.mean(best_val)))
    logging.info("%s/%s/%s: metric %.4f, stability %s, recovery %s", ds.name, mode, name,
                 summary["metric"], summary.get("stability"), summary.get("recovery"))
    return summary, comps


def _last_loss(run_dir: str) -> float | None:
    path = os.path.join(run_dir, wd.METRICS)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    losses = [entry["loss"] for entry in lines if "loss" in entry]
    return float(losses[-1]) if losses else None


def run_ebm(config, stages: Stages, ds: data_lib.Dataset, mode: str, weights: np.ndarray
            ) -> tuple[dict, np.ndarray]:
    """`ebm.num_replicas` interpretML EBMs, replica i on the training rows of weights[:, i]
    (the validation rows are not used: the EBM early-stops on its own inner split of its
    training rows); each replica's prediction and components at all N rows are saved in
    runs/<set>/<mode>/ebm/replica_<i>.npz and reused when the command is rerun."""
    names = component_names(ds.num_features, config.model.max_order)
    run_dir = stages.dir(f"{ds.name}/{mode}/ebm")
    pur = purification_rows(config, ds)
    n_all = len(ds.x_train) + len(ds.x_test)
    x_all = np.concatenate([ds.x_train, ds.x_test] + ([pur[2]] if pur else []))
    t0 = time.time()
    preds, comps = [], []
    for i in range(config.ebm.num_replicas):
        path = os.path.join(run_dir, f"replica_{i}.npz")
        if os.path.exists(path):
            saved = np.load(path)
            pred, comp = saved["pred"], saved["components"]
            if len(pred) != len(x_all):
                raise ValueError(f"{path} holds {len(pred)} rows, this config evaluates "
                                 f"{len(x_all)} (another eval.purify_grid?): use a new workdir")
        else:
            keep = weights[:, i] > 0
            pred, comp, icpt = baselines.fit_ebm(ds.x_train[keep], ds.y_train[keep], x_all,
                                                 names, ds.task, config.ebm,
                                                 seed=config.seed * 1000 + i)
            if mesh_lib.is_primary():
                np.savez(path, pred=pred, components=comp, intercept=icpt)
        preds.append(pred)
        comps.append(comp)
    preds, comps = np.stack(preds), np.stack(comps)
    metric = test_metric(ds.task, preds[:, len(ds.x_train):n_all], ds.y_test, ds.y_std)
    summary = summarise(ds, metric, comps[:, :n_all], names)
    if pur:      # the EBM's intercept does not enter the scores (components only)
        summary.update(purified_scores(ds, pur, comps[:, n_all:], None, names))
    comps = comps[:, :n_all]
    summary["train_s"] = time.time() - t0
    logging.info("%s/%s/ebm: metric %.4f, stability %s", ds.name, mode, summary["metric"],
                 summary.get("stability"))
    return summary, comps
