"""SketchDNN experiment: data, metric encoder, four diffusion models, samples, metrics.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    data     procedural CAD-like sketches (lib/sketchdnn/generator.py) or a SketchGraphs
             sequence file; train / test split
    encoder  an MLP on 32×32 rasterisations classifying the family (generator) or the
             primitive count (SketchGraphs); its penultimate features give the Fréchet
             distance and k-NN precision/recall
    models   for each run in config.runs (gaussian_softmax, onehot_gaussian, d3pm,
             gaussian_softmax_pe) a denoiser trained on the harness (models/<run>/, resumes),
             then samples -> FD, precision, recall, validity; NLL bound (bits per sketch)
             on the test set
Writes results.json, results.md, plots/ (sample grids, loss curves).
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import extras
from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import metrics as common_metrics
from lib.common import plotting, report, train_loop
from lib.common import workdir as wd
from lib.sketchdnn import (
    config_schema,
    diffusion,
    generator,
    metrics,
    sketchgraphs,
    training,
)
from lib.sketchdnn import loss as loss_lib
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.denoiser import SketchDenoiser
from lib.sketchdnn.report import markdown, targets
from lib.sketchdnn.config_schema import optional_modules

validate = config_schema.validate


# ----------------------------------------------------------------------------- data


def load_data(config) -> dict:
    """{'train', 'test': (N, S, 21) float32, 'train_labels', 'test_labels', 'num_classes',
    'info'}; encoder labels are families (generator) or primitive counts (SketchGraphs)."""
    d = config.data
    if d.source == "generator":
        n = d.num_train + d.num_test
        x, fam = generator.generate([config.seed, 1], n, d.num_slots,
                                    min_primitives=d.min_primitives,
                                    max_primitives=d.max_primitives, families=d.families)
        labels, ncls, info = fam, len(d.families), {"source": "generator"}
    else:
        if not os.path.exists(d.sketchgraphs_path):
            raise config_lib.ConfigError(f"config key 'data.sketchgraphs_path' = "
                                         f"{d.sketchgraphs_path!r}: no such file")
        x, info = sketchgraphs.load(d.sketchgraphs_path, d.num_slots,
                                    min_primitives=d.min_primitives,
                                    max_primitives=d.max_primitives)
        x = x[np.random.default_rng(4).permutation(len(x))]
        n = min(len(x), d.num_train + d.num_test)
        x = x[:n]
        labels = np.sum(np.argmax(x[..., sk.TYPE_SLICE], -1) != sk.NONE, 1).astype(np.int32)
        ncls = d.num_slots + 1
        info = {"source": "sketchgraphs", **info}
    n_test = min(d.num_test, len(x) // 2)
    return {"train": x[n_test:], "test": x[:n_test], "train_labels": labels[n_test:],
            "test_labels": labels[:n_test], "num_classes": ncls, "info": info}


# ----------------------------------------------------------------------------- encoder


def train_encoder(config, workdir: str, mesh, data: dict):
    ev = config.eval
    enc = metrics.SketchEncoder(num_classes=data["num_classes"])
    imgs = metrics.rasterize(data["train"], ev.raster_res)
    task = training.encoder_task(enc, imgs, data["train_labels"], batch_size=ev.encoder_batch,
                                 seed=config.seed)
    cfg = train_loop.LoopConfig(num_steps=ev.encoder_steps,
                                log_every=max(ev.encoder_steps // 10, 1),
                                checkpoint_every=ev.encoder_steps, seed=config.seed)
    result = train_loop.train(task, cfg, workdir=os.path.join(workdir, "models", "encoder"),
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
    process = diffusion.make_process(kind, config.diffusion.num_steps)
    model = SketchDenoiser(num_steps=config.diffusion.num_steps, width=m.width, depth=m.depth,
                           heads=m.heads, mlp_ratio=m.mlp_ratio, positional_encoding=pe)
    return process, model


def train_model(config, workdir: str, mesh, run: str, x_train: np.ndarray):
    """Train (or resume) one denoiser in <workdir>/models/<run>; (EMA params, info)."""
    process, model = build_model(config, run)
    o, df = config.optim, config.diffusion
    task = training.diffusion_task(
        process, model, x_train, batch_size=o.batch_size, lr=o.lr,
        num_steps=config.train.num_steps, warmup=o.warmup_steps, grad_clip=o.grad_clip,
        ema_decay=o.ema_decay, low_t_max=df.low_t_max, low_t_weight=df.low_t_weight,
        seed=config.train.seed, constant_lr=o.schedule == "constant")
    t0 = time.time()
    model_dir = os.path.join(workdir, "models", run)
    result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                              workdir=model_dir, mesh=mesh)  # guards.Preempted on SIGTERM
    rows = common_metrics.read_metrics(model_dir)
    losses = [(r["step"], r["loss"]) for r in rows if "loss" in r]
    n_params = sum(int(np.prod(v.shape)) for v in jax.tree.leaves(result.state["params"]))
    info = {"steps": result.step, "resumed_from": result.resumed_from,
            "train_s": time.time() - t0, "num_params": n_params,
            "first_loss": losses[0][1] if losses else None,
            "last_loss": losses[-1][1] if losses else None}
    logging.info("model %s: %s", run, info)
    return process, model, jax.device_get(result.state["ema"]), info, losses


_JITTED: dict = {}


def jitted(config, run: str, process, model):
    """(sample(params, key), bound(params, x, key)) jitted once per run and shape settings,
    so a rerun in the same process (tests, resume) reuses the compiled functions."""
    m, df, ev = config.model, config.diffusion, config.eval
    key = (run, df.num_steps, df.sample_steps, df.nll_bins, m.width, m.depth, m.heads,
           m.mlp_ratio, ev.sample_batch, config.data.num_slots)
    if key not in _JITTED:
        def sample(p, k):
            return diffusion.sample(process, lambda x, t: model.apply(p, x, t), k,
                                    ev.sample_batch, config.data.num_slots, df.sample_steps)

        def bound(p, x, k):
            return loss_lib.nll_bound(process, lambda xt, t: model.apply(p, xt, t), x, k,
                                      bins=df.nll_bins)

        _JITTED[key] = (jax.jit(sample), jax.jit(bound))
    return _JITTED[key]


def draw_samples(config, sample_fn, params, key) -> np.ndarray:
    """(num_samples, S, 21) x̂₀ of the reverse process (probabilities + parameters)."""
    ev = config.eval
    run = sample_fn
    out, done = [], 0
    while done < ev.num_samples:
        out.append(np.asarray(run(params, jax.random.fold_in(key, done))))
        done += ev.sample_batch
    return np.concatenate(out, 0)[:ev.num_samples]


def nll_bits(config, bound, params, x_test: np.ndarray, key) -> dict:
    """Mean and standard error of the bound terms over test sketches × nll_repeats."""
    chunk = max(config.eval.sample_batch, 1)
    parts: dict[str, list] = {}
    for r in range(config.eval.nll_repeats):
        for i in range(0, len(x_test), chunk):
            res = bound(params, jnp.asarray(x_test[i:i + chunk]),
                        jax.random.fold_in(key, r * 100_003 + i))
            for k, v in res.items():
                parts.setdefault(k, []).append(np.asarray(v))
    out = {}
    for k, v in parts.items():
        a = np.concatenate(v)
        out[k] = float(a.mean())
        out[k + "_se"] = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0
    return out


def sample_quality(config, feat_fn, enc_params, real_feats, x: np.ndarray,
                   ref_validity) -> dict:
    ev = config.eval
    f = metrics.features(feat_fn, enc_params, x, ev.raster_res)
    prec, rec = metrics.knn_precision_recall(real_feats, f, ev.knn_k)
    decoded, repaired = [], 0
    for row in x:
        s, fixed = sk.decode(row, repair=True)
        decoded.append(s)
        repaired += fixed
    val = metrics.validity(decoded, ev.endpoint_eps)
    nprim = sum(len(s) for s in decoded)
    return {"fd": metrics.frechet_distance(f, real_feats), "precision": prec, "recall": rec,
            "validity": val, "repaired_fraction": repaired / max(nprim, 1),
            "type_tv": metrics.total_variation(val["type_shares"], ref_validity["type_shares"]),
            "count_tv": metrics.total_variation(val["count_hist"], ref_validity["count_hist"]),
            "decoded": decoded}


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
    primary = mesh_lib.is_primary()
    t0 = time.time()
    data = load_data(config)
    enc, enc_params, acc = train_encoder(config, workdir, mesh, data)
    ev = config.eval
    key = ("encoder", data["num_classes"])
    if key not in _JITTED:
        _JITTED[key] = metrics.feature_fn(enc)
    feat_fn = _JITTED[key]
    real_feats = metrics.features(feat_fn, enc_params, data["test"], ev.raster_res)
    test_sketches = [sk.decode(r) for r in data["test"]]
    ref_validity = metrics.validity(test_sketches, ev.endpoint_eps)
    # the floor: a second draw of real sketches (training rows) against the test set
    ref_x = data["train"][:ev.num_samples]
    reference = sample_quality(config, feat_fn, enc_params, real_feats, ref_x, ref_validity)
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
    grids = {"data": test_sketches[:ev.grid_samples]}
    curves = {}
    for i, run in enumerate(config.runs):
        guards.check_preempted(f"model {run}")
        process, model, params, info, losses = train_model(config, workdir, mesh, run,
                                                           data["train"])
        sample_fn, bound_fn = jitted(config, run, process, model)
        t1 = time.time()
        x = draw_samples(config, sample_fn, params, jax.random.key(config.seed + 101 + i))
        sample_s = time.time() - t1
        quality = sample_quality(config, feat_fn, enc_params, real_feats, x, ref_validity)
        grids[run] = quality.pop("decoded")[:ev.grid_samples]
        t2 = time.time()
        nll = nll_bits(config, bound_fn, params, data["test"],
                       jax.random.key(config.seed + 202))
        results["runs"][run] = {"train": info, **quality, "nll": nll, "sample_s": sample_s,
                                "nll_s": time.time() - t2}
        curves[run] = ([s for s, _ in losses], [v for _, v in losses])
    results["targets"] = targets(results)
    results["wall_s"] = time.time() - t0
    guards.check_preempted("writing results.json")
    if primary:
        if ev.plot:
            plot_dir = os.path.join(workdir, wd.PLOTS)
            for name, sketches in grids.items():
                if sketches:
                    sk.render_png(os.path.join(plot_dir, f"samples_{name}.png"), sketches,
                                  title=f"{name} ({config.tag})")
            plotting.line_plot(os.path.join(plot_dir, "train_loss.png"), curves, xlabel="step",
                               ylabel="training loss", title=config.tag, logy=True)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), markdown(results) + "\n")
    return results
