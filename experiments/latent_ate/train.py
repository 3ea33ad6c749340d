"""Latent-feature ATE estimation: pre-train, simulate, estimate, summarise — end to end.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests and
notebooks); `main.py` only parses flags. Data flow:

    config -> validate -> images split into a pre-training part and a disjoint causal pool
      -> runs.pretrain_and_extract: CNN classifier, pixel autoencoder, confounder
         autoencoder via lib.common.train_loop (Orbax checkpoints, reused on rerun), the
         pool's features cached in <workdir>/features/
      -> intrinsic dimension (TwoNN, MLE) of every adjustment set
      -> per setting (label, complex): R replications (semisynthetic.replicate), every
         estimator batched over them (estimators.run), Monte Carlo summaries
      -> workdir: config.json, results.json, results.md, plots/*.png

A rerun of the same workdir reuses the checkpoints and the feature cache (no pre-training)
and recomputes the Monte Carlo part, which dominates the run time, overwriting results.
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
from lib.common import workdir as wd
from lib.latent_ate import config_schema, estimators, features, intrinsic_dim, report, runs
from lib.latent_ate import semisynthetic

validate = config_schema.validate


def _adjustment_sets(feats: dict, pixel_pool: int) -> dict:
    """The pool's adjustment sets: raw pixels (average-pooled by `pixel_pool`),
    standardised CNN latents and the pixel-autoencoder code."""
    cnn, ae = features.standardize(feats["cnn"])[0], features.standardize(feats["pixel_ae"])[0]
    pixels = features.pool_pixels(feats["pixels"], pixel_pool)
    return {"pixels": pixels.astype(np.float32), "cnn": cnn.astype(np.float32),
            "pixel_ae": ae.astype(np.float32)}


def _intrinsic(sets: dict, confounder: np.ndarray, config) -> dict:
    rng = np.random.default_rng(config.seed)
    n = min(config.id.points, confounder.shape[0])
    rows = rng.permutation(confounder.shape[0])[:n]
    out = {}
    for name, x in {**sets, "confounder_code": confounder}.items():
        sub = x[rows]
        out[name] = {"ambient": int(x.shape[1]), "two_nn": intrinsic_dim.two_nn(sub),
                     "mle": intrinsic_dim.mle(sub, config.id.k), "k": config.id.k,
                     "points": n}
    return out


def run_setting(config, setting: str, sets: dict, feats: dict, key, plot_dir) -> dict:
    sim = config.sim
    label = semisynthetic.binary_label(feats["labels"], config.data.label_classes)
    conf = label if setting == "label" else feats["confounder"].astype(np.float32)
    reps = semisynthetic.replicate(key, conf, setting, sim.n, sim.reps, sim)
    block = {"truth": sim.theta, "n": sim.n, "reps": sim.reps,
             "treated_share": float(np.asarray(reps.d).mean()),
             "propensity_range": [float(np.asarray(reps.propensity).min()),
                                  float(np.asarray(reps.propensity).max())],
             "estimators": {}}
    if setting == "label":
        block["prevalence"] = float(label.mean())
        block["naive_limit"] = semisynthetic.naive_limit_label(
            float(label.mean()), sim.theta, sim.gamma, sim.p1, sim.p0)
    for i, name in enumerate(config.estimators):
        spec = estimators.ESTIMATORS[name]
        x = None if spec.adjust in (None, "confounder") else sets[spec.adjust]
        t0 = time.perf_counter()
        theta, se, rmse = estimators.run(name, config, x, conf, reps,
                                         jax.random.fold_in(key, i + 1), config.eval.rep_batch)
        theta, se = np.asarray(theta), np.asarray(se)
        s = report.summarize(theta, se, sim.theta, config.dml.level)
        s.update({"adjust": spec.adjust or "none", "seconds": time.perf_counter() - t0,
                  "thetas": theta, "ses": se,
                  "nuisance_rmse": report.summarize_rmse(rmse)})
        block["estimators"][name] = s
        logging.info("%s / %s: bias %+.4f (MC se %.4f), coverage %s, %.0f s", setting, name,
                     s["bias"], s["bias_mc_se"], s["coverage"], s["seconds"])
    if plot_dir:
        title = f"{setting} confounding, n = {sim.n}: first {config.eval.plot_reps} replications"
        report.plot_intervals(os.path.join(plot_dir, f"estimates_{setting}.png"),
                              block["estimators"], sim.theta, config.eval.plot_reps, title)
        report.plot_z_hist(os.path.join(plot_dir, f"zscores_{setting}.png"),
                           block["estimators"], sim.theta,
                           [n for n in config.estimators if block["estimators"][n]["mean_se"]],
                           f"{setting}: (θ̂ − θ)/se over {sim.reps} replications vs N(0, 1)")
    return block


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the experiment in `workdir`; returns (and writes) the results dict."""
    validate(config)
    t_start = time.perf_counter()
    primary = jax.process_index() == 0
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    t0 = time.perf_counter()
    feats = runs.pretrain_and_extract(config, workdir, mesh)
    pretrain_s = time.perf_counter() - t0
    sets = _adjustment_sets(feats, config.data.pixel_pool)
    label = semisynthetic.binary_label(feats["labels"], config.data.label_classes)
    pred = feats["cnn_pool_logits"].argmax(1)
    results = {
        "features": {
            "pool_size": int(feats["labels"].shape[0]),
            "cnn_pool_accuracy": float(np.mean(pred == feats["labels"])),
            "label_accuracy": float(np.mean(
                semisynthetic.binary_label(pred, config.data.label_classes) == label)),
            "intrinsic_dim": _intrinsic(sets, feats["confounder"], config),
            "pretrain_seconds": pretrain_s,
        },
        "settings": {},
    }
    plot_dir = os.path.join(workdir, wd.PLOTS) if (config.eval.plots and primary) else None
    key = jax.random.key(config.seed)
    for setting in config.sim.settings:
        guards.check_preempted(f"setting {setting}")
        # replications depend on the setting, not on its position in sim.settings, so runs
        # of one setting and of both draw the same data
        k = jax.random.fold_in(key, semisynthetic.SETTING_STREAM
                               + semisynthetic.SETTINGS.index(setting))
        results["settings"][setting] = run_setting(config, setting, sets, feats, k, plot_dir)
    results["targets"] = report.targets(results, config)
    results["machine"] = common_report.machine()
    results["wall_s"] = time.perf_counter() - t_start
    guards.check_preempted("writing results.json")
    if primary:
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results, config.estimators) + "\n")
    return results
