"""GMFlow experiment: train toy and image models on the harness, sample, measure, plot.

    toy:    per data set, flow matching (K = 1, L2) and GMFlow MLPs -> every solver at every
            NFE (lib/gmflow/toy_eval.py) -> SWD, MMD, in-square fraction, plots
    digits: metric classifier + class-conditional GMFlow and flow-matching denoisers per seed
            -> guidance sweeps at each NFE (lib/gmflow/digits_eval.py) -> FD, precision,
            recall, saturation, accuracy (mean ± SE over seeds)
Models train in <workdir>/models/<name>/ (stages, resumable from their checkpoints); the
evaluation is recomputed on every run (deterministic given the checkpoints).
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import metrics as logged
from lib.common import report, train_loop
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.data import images
from lib.gmflow import config_schema, digits_eval, image_data, metrics, toy_eval, toys, training
from lib.gmflow.networks import Classifier, GMFlowMLP
from lib.gmflow.report import markdown, mean_over_seeds, targets

validate = config_schema.validate


# ----------------------------------------------------------------------------- training


def train_model(config, workdir: str, mesh, name: str, model: GMFlowMLP, batch_fn, example_x,
                loss_kind: str, trans_ratio: float, batch_size: int, num_classes: int = 0,
                p_uncond: float = 0.0, seed_offset: int = 0):
    """Train (or resume) one model in <workdir>/models/<name>, initialised and keyed with
    `train.seed + seed_offset`; returns (EMA params, info); `guards.Preempted` on SIGTERM."""
    guards.check_preempted(f"model {name}")
    task = training.make_task(
        model, example_x=example_x, batch_fn=batch_fn, batch_size=batch_size,
        loss_kind=loss_kind, trans_ratio=trans_ratio, num_steps=config.train.num_steps,
        optim_block=config.optim, num_classes=num_classes, p_uncond=p_uncond)
    t0 = time.time()
    loop = train_loop.LoopConfig.from_config(config.train)
    loop = dataclasses.replace(loop, seed=loop.seed + seed_offset)
    model_dir = Stages(workdir, "models").dir(name)
    result = train_loop.train(task, loop, workdir=model_dir, mesh=mesh)
    losses = _losses(model_dir)
    info = {"steps": result.step, "resumed_from": result.resumed_from,
            "train_s": time.time() - t0, "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None}
    logging.info("model %s: %s", name, info)
    return jax.device_get(result.state["ema"]), info


def _losses(model_dir: str) -> list[float]:
    """The logged training losses of a model's stage folder, in step order."""
    return [r["loss"] for r in logged.read_metrics(model_dir) if "loss" in r]


# ----------------------------------------------------------------------------- toy part


def run_toy(config, workdir: str, mesh) -> dict:
    """Per toy data set: reference statistics, then every model of `toy_eval.toy_models`
    trained and sampled by each solver at each NFE; plots on the primary process."""
    tc = config.toy
    out = {}
    for d_index, dataset in enumerate(tc.datasets):
        ref, ref_stats = toy_eval.reference(config, dataset, d_index)
        res = {"reference": ref_stats, "models": {}}
        scatter_rows, swd_curves = {}, {}
        for name, k, loss_kind in toy_eval.toy_models(config, dataset):
            model = toy_eval.toy_model(tc, k)

            def batch_fn(step, _d=d_index, _ds=dataset):
                rng = np.random.default_rng([config.train.seed, step, _d])
                return {"x": toys.as_points(toys.sample_toy(_ds, rng, tc.batch_size))}

            params, info = train_model(
                config, workdir, mesh, f"{dataset}_{name}", model, batch_fn,
                toys.as_points(ref[:1]), loss_kind, tc.trans_ratio, tc.batch_size)
            solvers, rows, curves = toy_eval.evaluate_model(config, model, params, loss_kind,
                                                            name, ref)
            res["models"][name] = {"components": k, "loss": loss_kind, "train": info,
                                   "solvers": solvers}
            scatter_rows.update(rows)
            swd_curves.update(curves)
        if mesh_lib.is_primary():
            toy_eval.plot(workdir, config, dataset, ref, ref_stats["swd"], scatter_rows,
                          swd_curves)
        out[dataset] = res
    return out


# ----------------------------------------------------------------------------- digits part


def train_classifier(config, workdir, mesh, train: images.ImageSet, test: images.ImageSet):
    """The metric classifier (MLP) on the real training split, via train_loop; test accuracy."""
    dc = config.digits
    clf = Classifier(num_classes=train.num_classes)
    task = training.make_classifier_task(clf, train.images, train.labels, lr=dc.classifier_lr,
                                         batch_size=dc.classifier_batch_size, seed=config.seed)
    result = train_loop.train(task, training.classifier_loop(dc.classifier_steps, config.seed),
                              workdir=Stages(workdir, "models").dir("classifier"), mesh=mesh)
    params = jax.device_get(result.state["params"])
    logits = clf.apply(params, jnp.asarray(test.images))
    acc = float(np.mean(np.argmax(np.asarray(logits), -1) == test.labels))
    feats = jax.jit(lambda x: clf.apply(params, x, method=Classifier.features))
    predict = jax.jit(lambda x: jnp.argmax(clf.apply(params, x), -1))
    return feats, predict, acc


def run_digits(config, workdir: str, mesh) -> dict:
    """Classifier once, then per seed offset s in `digits.seeds`: models trained with
    `train.seed + s` (named `<dataset>_<gm|fm>` for s = 0, `..._seed<s>` otherwise), sampled
    with `seed + s`, swept over guidance at every NFE. One seed: its sweep is `nfe`; several:
    `per_seed` holds each and `nfe` the mean with standard errors (`<metric>_se`)."""
    dc = config.digits
    digits_eval.check(dc)
    ds, train, test = digits_eval.load(dc, config.seed)
    h, w, c = ds.images.shape[1:]
    for name, k in (("gm", dc.components), ("fm", 1)):
        digits_eval.image_model(dc, h, w, c, k, ds.num_classes)   # config errors before training
    feats, predict, acc = train_classifier(config, workdir, mesh, train, test)
    ref = ds.images if not dc.real_samples else ds.images[
        image_data.class_balanced_subset(ds.labels, dc.real_samples, config.seed)]
    real_feats = np.asarray(feats(jnp.asarray(ref)))
    results = {"dataset": dc.dataset, "image_shape": [h, w, c], "network": dc.network,
               "classifier_test_accuracy": acc, "num_classes": ds.num_classes,
               "real": {"saturation": metrics.saturation(ref),
                        "out_of_range": metrics.out_of_range(ref), "count": len(ref)}}
    per_seed = [dict(seed=s, **_digits_one_seed(config, workdir, mesh, s, train, feats, predict,
                                                 real_feats, plot=(i == 0)))
                for i, s in enumerate(dc.seeds)]
    if len(per_seed) == 1:
        results.update(train=per_seed[0]["train"], nfe=per_seed[0]["nfe"])
    else:
        results.update(seeds=list(dc.seeds), per_seed=per_seed, train=per_seed[0]["train"],
                       nfe=mean_over_seeds([p["nfe"] for p in per_seed]))
    if mesh_lib.is_primary():
        digits_eval.plot_fd_precision(workdir, dc.dataset, results["nfe"], len(per_seed))
    return results


def _digits_one_seed(config, workdir, mesh, seed, train, feats, predict, real_feats,
                     plot: bool) -> dict:
    """Train (or resume) the GMFlow and flow-matching models for one seed offset and sweep
    every method over its guidance scales at every NFE: {"train", "nfe"}."""
    dc = config.digits
    h, w, c = train.images.shape[1:]
    x_train = training.image_rows(train.images)
    batch_fn = training.image_batch_fn(x_train, train.labels, dc.batch_size,
                                       config.train.seed + seed)

    models, infos = {}, {}
    for name, k, loss_kind in (("gm", dc.components, dc.loss), ("fm", 1, "l2")):
        if not any(digits_eval.METHODS[m][0] == name for m in dc.methods):
            continue
        model = digits_eval.image_model(dc, h, w, c, k, train.num_classes)
        tag = f"{dc.dataset}_{name}" + (f"_seed{seed}" if seed else "")
        params, infos[name] = train_model(
            config, workdir, mesh, tag, model, batch_fn, x_train[:1], loss_kind,
            dc.trans_ratio, dc.batch_size, num_classes=train.num_classes,
            p_uncond=dc.p_uncond, seed_offset=seed)
        models[name] = (model, params)
    nfe = digits_eval.sweep(config, seed, models, train, feats, predict, real_feats,
                            os.path.join(workdir, wd.PLOTS) if plot else None)
    return {"train": infos, "nfe": nfe}


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               renamed=config_schema.RENAMED_KEYS, added=config_lib.added_of(config_schema.KEYS))
    t0 = time.time()
    results = {"machine": report.machine(), "tag": config.tag,
               "budget": {"train_steps_per_model": config.train.num_steps}}
    if "toy" in config.parts:
        results["toy"] = run_toy(config, workdir, mesh)
    if "digits" in config.parts:
        results["digits"] = run_digits(config, workdir, mesh)
    results["targets"] = targets(results)
    results["wall_s"] = time.time() - t0
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), markdown(results) + "\n")
    return results
