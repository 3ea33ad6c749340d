"""SketchDNN experiment: data, metric encoder, four diffusion models, samples, metrics.

    data     procedural CAD-like sketches or a SketchGraphs file (lib/sketchdnn/dataset.py)
    encoder  an MLP on 32×32 rasterisations; its penultimate features give the Fréchet
             distance and k-NN precision/recall
    models   for each run in config.runs a denoiser trained on the harness (models/<run>/,
             resumes), then samples -> FD, precision, recall, validity; NLL bound (bits per
             sketch) on the test set (lib/sketchdnn/evaluation.py)
Writes results.json, results.md, plots/ (sample grids, loss curves).
"""
from __future__ import annotations

import dataclasses
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import extras, guards
from lib.common import mesh as mesh_lib
from lib.common import metrics as common_metrics
from lib.common import report, train_loop
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.sketchdnn import config_schema, diffusion, evaluation, metrics, training
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.config_schema import optional_modules
from lib.sketchdnn.dataset import load_data
from lib.sketchdnn.denoiser import SketchDenoiser
from lib.sketchdnn.report import markdown, targets

validate = config_schema.validate
ADDED_KEYS = {"loss.ce_mean": "slots", "diffusion.x0_logits": "embedding_mean",
              "eval.curve_steps": (), "eval.curve_samples": 0}


# ----------------------------------------------------------------------------- encoder


def train_encoder(config, workdir: str, mesh, data: dict):
    """The metric encoder in <workdir>/models/encoder; (module, params, test accuracy)."""
    ev = config.eval
    enc = metrics.SketchEncoder(num_classes=data["num_classes"])
    imgs = metrics.rasterize(data["train"], ev.raster_res)
    task = training.make_encoder_task(enc, imgs, data["train_labels"],
                                      batch_size=ev.encoder_batch, seed=config.seed)
    cfg = train_loop.LoopConfig(num_steps=ev.encoder_steps,
                                log_every=max(ev.encoder_steps // ev.encoder_logs, 1),
                                checkpoint_every=ev.encoder_steps, seed=config.seed)
    result = train_loop.train(task, cfg, workdir=Stages(workdir, "models").dir("encoder"),
                              mesh=mesh)                     # guards.Preempted on SIGTERM
    params = jax.device_get(result.state["params"])
    test_imgs = metrics.rasterize(data["test"], ev.raster_res)
    acc = float(np.mean(np.argmax(np.asarray(enc.apply(params, jnp.asarray(test_imgs))), -1)
                        == data["test_labels"]))
    return enc, params, acc


# ----------------------------------------------------------------------------- models


def build_model(config, run: str) -> tuple[diffusion.Process, SketchDenoiser]:
    kind, pe = config_schema.RUNS[run]
    m = config.model
    process = diffusion.make_process(kind, config.diffusion.num_steps,
                                     x0_logits=config.diffusion.x0_logits)
    model = SketchDenoiser(num_steps=config.diffusion.num_steps, width=m.width, depth=m.depth,
                           heads=m.heads, mlp_ratio=m.mlp_ratio, positional_encoding=pe)
    return process, model


def train_model(config, workdir: str, mesh, run: str, x_train: np.ndarray,
                on_curve_step=None):
    """Train (or resume) one denoiser in <workdir>/models/<run>; (EMA params, info).

    With on_curve_step, training stops at each of `eval.curve_steps` (resuming from the
    checkpoint written there) and at the end, and calls
    on_curve_step(step, process, model, EMA params) there."""
    process, model = build_model(config, run)
    o, df = config.optim, config.diffusion
    task = training.make_diffusion_task(
        process, model, x_train, batch_size=o.batch_size, lr=o.lr,
        num_steps=config.train.num_steps, warmup=o.warmup, clip=o.clip,
        ema_decay=o.ema_decay, low_t_max=df.low_t_max, low_t_weight=df.low_t_weight,
        seed=config.train.seed, constant_lr=o.schedule == "constant",
        ce_mean=config.loss.ce_mean)
    t0 = time.time()
    model_dir = Stages(workdir, "models").dir(run)
    loop_cfg = train_loop.LoopConfig.from_config(config.train)
    stops = (*config.eval.curve_steps, config.train.num_steps) if on_curve_step else (
        config.train.num_steps,)
    resumed_from = None
    for stop in stops:
        result = train_loop.train(task, dataclasses.replace(loop_cfg, num_steps=stop),
                                  workdir=model_dir, mesh=mesh)  # guards.Preempted on SIGTERM
        resumed_from = result.resumed_from if resumed_from is None else resumed_from
        if on_curve_step and result.step == stop:   # resumed past `stop`: no state of it
            on_curve_step(stop, process, model, jax.device_get(result.state["ema"]))
    rows = common_metrics.read_metrics(model_dir)
    losses = [(r["step"], r["loss"]) for r in rows if "loss" in r]
    n_params = sum(int(np.prod(v.shape)) for v in jax.tree.leaves(result.state["params"]))
    info = {"steps": result.step, "resumed_from": resumed_from,
            "train_s": time.time() - t0, "num_params": n_params,
            "first_loss": losses[0][1] if losses else None,
            "last_loss": losses[-1][1] if losses else None}
    logging.info("model %s: %s", run, info)
    return process, model, jax.device_get(result.state["ema"]), info, losses


# ----------------------------------------------------------------------------- entry point


def _evaluate_run(config, i: int, run: str, params, process, model, data, feat_fn, enc_params,
                  real_feats, ref_validity) -> tuple[dict, list]:
    """Samples, their quality and the test NLL bound of one trained run; (entry, grid)."""
    sample_fn, bound_fn = evaluation.jitted(config, run, process, model)
    t1 = time.time()
    x = evaluation.draw_samples(config, sample_fn, params,
                                jax.random.key(config.seed + evaluation.SAMPLE_STREAM + i))
    sample_s = time.time() - t1
    quality = evaluation.sample_quality(config, feat_fn, enc_params, real_feats, x, ref_validity)
    grid = quality.pop("decoded")[:config.eval.grid_samples]
    t2 = time.time()
    nll = evaluation.nll_bits(config, bound_fn, params, data["test"],
                              jax.random.key(config.seed + evaluation.NLL_STREAM))
    return {**quality, "nll": nll, "sample_s": sample_s, "nll_s": time.time() - t2}, grid


def _curve_row(quality: dict) -> dict:
    """The sample metrics recorded against the training step."""
    v = quality["validity"]
    return {"fd": quality["fd"], "precision": quality["precision"],
            "recall": quality["recall"], "dangling_fraction": v["dangling_fraction"],
            "closed_rate": v["closed_rate"]}


def _read_curve(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _curve_hook(config, i, run, curve, path, feat_fn, enc_params, real_feats, ref_validity,
                primary):
    """on_curve_step(step, process, model, params) for `run`: the sample metrics of
    eval.curve_samples samples at that step, added to `curve` and written to `path` (fewer
    samples than the final table: FD is biased up at small n, so curve values compare along a
    curve and between curves, not with the table). A step already in `curve` is skipped."""
    n = config.eval.curve_samples      # > eval.knn_k >= 1 (config_schema)
    curve_config = config_lib.apply_overrides(config, {"eval.num_samples": n,
                                                       "eval.sample_batch": n})

    def on_curve_step(step, process, model, params):
        if str(step) in curve:
            return
        sample_fn, _ = evaluation.jitted(curve_config, run, process, model)
        x = evaluation.draw_samples(curve_config, sample_fn, params,
                                    jax.random.key(config.seed + evaluation.CURVE_STREAM + i))
        q = evaluation.sample_quality(curve_config, feat_fn, enc_params, real_feats, x,
                                      ref_validity)
        curve[str(step)] = _curve_row(q)
        logging.info("model %s at step %d: %s", run, step, curve[str(step)])
        if primary:
            wd.write_json_atomic(path, curve)
    return on_curve_step


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    # keys added after the quick workdirs were made, with the values that reproduce them;
    # under a constant rate nothing depends on train.num_steps, so a run may be extended
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added={**ADDED_KEYS, **config_lib.added_of(config_schema.KEYS)},
               renamed=config_schema.RENAMED_KEYS,
               steps_extendable=config.optim.schedule == "constant")
    primary = mesh_lib.is_primary()
    t0 = time.time()
    data = load_data(config)
    enc, enc_params, acc = train_encoder(config, workdir, mesh, data)
    ev = config.eval
    feat_fn = evaluation.feature_fn(enc, data["num_classes"])
    real_feats = metrics.features(feat_fn, enc_params, data["test"], ev.raster_res)
    test_sketches = [sk.decode(r) for r in data["test"]]
    ref_validity = metrics.validity(test_sketches, ev.endpoint_eps)
    # the floor: a second draw of real sketches (training rows) against the test set
    reference = evaluation.sample_quality(config, feat_fn, enc_params, real_feats,
                                          data["train"][:ev.num_samples], ref_validity)
    results = {"machine": report.machine(), "tag": config.tag,
               "data": {**data["info"], "num_train": len(data["train"]),
                        "num_test": len(data["test"]), "num_slots": config.data.num_slots},
               "budget": {"train_steps_per_model": config.train.num_steps,
                          "diffusion_steps": config.diffusion.num_steps,
                          "sample_steps": config.diffusion.sample_steps,
                          "num_samples": ev.num_samples},
               "encoder_test_accuracy": acc,
               "reference": {k: v for k, v in reference.items() if k != "decoded"},
               "runs": {}}
    grids, curves = {"data": test_sketches[:ev.grid_samples]}, {}
    for i, run in enumerate(config.runs):
        guards.check_preempted(f"model {run}")
        curve_path = os.path.join(Stages(workdir, "models").dir(run), "curve.json")
        curve = _read_curve(curve_path)
        hook = _curve_hook(config, i, run, curve, curve_path, feat_fn, enc_params, real_feats,
                           ref_validity, primary)
        process, model, params, info, losses = train_model(
            config, workdir, mesh, run, data["train"], hook if ev.curve_samples else None)
        entry, grids[run] = _evaluate_run(config, i, run, params, process, model, data, feat_fn,
                                          enc_params, real_feats, ref_validity)
        results["runs"][run] = {"train": info, **entry,
                                "curve": [{"step": int(k), **curve[k]}
                                          for k in sorted(curve, key=int)]}
        curves[run] = ([s for s, _ in losses], [v for _, v in losses])
    results["targets"] = targets(results)
    results["wall_s"] = time.time() - t0
    guards.check_preempted("writing results.json")
    if primary:
        if ev.plot:
            evaluation.write_plots(os.path.join(workdir, wd.PLOTS), config.tag, grids, curves)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), markdown(results) + "\n")
    return results
