"""GMFlow experiment: train toy and digit models on the harness, sample, measure, plot.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` only parses flags.

    toy:    for each data set, flow matching (K = 1, L2) and GMFlow (K in components, transition
            loss) MLPs -> samples with every solver at every NFE -> SWD, MMD, in-square
            fraction -> tables, scatter grids, SWD-vs-NFE plots
    digits: classifier (features for FD / precision / recall) + class-conditional GMFlow and
            flow-matching MLPs or UNets (8×8 digits or Fashion-MNIST, optionally downsampled),
            per seed -> probabilistic guidance and CFG sweeps at each NFE -> FD, precision,
            recall, saturation, accuracy (mean ± SE over seeds) -> tables, image rows
Models train in <workdir>/models/<name>/ with their own checkpoints (rerun resumes); the
evaluation is recomputed on every run (it is deterministic given the checkpoints).
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import mesh as mesh_lib
from lib.common import plotting, report, train_loop
from lib.common import workdir as wd
from lib.data import images
from lib.gmflow import (
    config_schema,
    denoising,
    guidance,
    image_data,
    metrics,
    mixture,
    plots,
    samplers,
    toys,
    training,
)
from lib.gmflow.networks import Classifier, GMFlowMLP, GMFlowUNet
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
        loss_kind=loss_kind, trans_ratio=trans_ratio, lr=config.optim.lr,
        num_steps=config.train.num_steps, warmup=config.optim.warmup_steps,
        ema_decay=config.optim.ema_decay, num_classes=num_classes, p_uncond=p_uncond)
    t0 = time.time()
    loop = train_loop.LoopConfig.from_config(config.train)
    loop = dataclasses.replace(loop, seed=loop.seed + seed_offset)
    result = train_loop.train(task, loop, workdir=os.path.join(workdir, "models", name), mesh=mesh)
    losses = _losses(os.path.join(workdir, "models", name))
    info = {"steps": result.step, "resumed_from": result.resumed_from,
            "train_s": time.time() - t0, "first_loss": losses[0] if losses else None,
            "last_loss": losses[-1] if losses else None}
    logging.info("model %s: %s", name, info)
    return jax.device_get(result.state["ema"]), info


def _losses(model_dir: str) -> list[float]:
    path = os.path.join(model_dir, wd.METRICS)
    if not os.path.exists(path):
        return []
    import json
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if '"loss"' in line]


# ----------------------------------------------------------------------------- toy part


def _toy_models(config, dataset: str) -> list[tuple[str, int, str]]:
    comps = config.toy.components if dataset == "checkerboard" else config.toy.grid_components
    out = [("fm", 1, "l2")] if config.toy.fm_baseline else []
    return out + [(f"gm{k}", k, config.toy.loss) for k in comps]


def _toy_samplers(model: GMFlowMLP, kind: str, solver: str):
    """A jitted (params, x1, key, nfe, substeps) -> samples for one model and solver."""
    def gm_u(params, x, t):
        return model.apply(params, x, jnp.full((x.shape[0],), t, x.dtype))

    if kind == "l2":
        def velocity_sampler(params, x1, key, nfe):
            vel = lambda x, t: mixture.mean(gm_u(params, x, t))
            return samplers.fm_sample(vel, x1, key, nfe=nfe, solver=solver)
        return jax.jit(velocity_sampler, static_argnums=3)

    def gm_sampler(params, x1, key, nfe, substeps):
        den = lambda x, t: denoising.u_to_x0(gm_u(params, x, t), x, t)
        return samplers.gm_sample(den, x1, key, nfe=nfe, solver=solver, substeps=substeps)
    return jax.jit(gm_sampler)


def run_toy(config, workdir: str, mesh) -> dict:
    tc = config.toy
    out = {}
    for d_index, dataset in enumerate(tc.datasets):
        ref = toys.sample_toy(dataset, np.random.default_rng([config.seed, 99, d_index]),
                              tc.num_samples)
        ref2 = toys.sample_toy(dataset, np.random.default_rng([config.seed, 98, d_index]),
                               tc.num_samples)
        res = {"reference": {"swd": metrics.sliced_wasserstein(ref, ref2, tc.swd_projections),
                             "mmd": metrics.mmd_rbf(ref[:tc.mmd_samples], ref2[:tc.mmd_samples]),
                             "in_square": float(toys.in_white_square(ref2).mean())},
               "models": {}}
        scatter_rows = {}
        swd_curves = {}
        for name, k, loss_kind in _toy_models(config, dataset):
            model = GMFlowMLP(groups=1, channels=2, num_components=k, width=tc.width,
                              depth=tc.depth, coord_embed_dim=tc.coord_embed_dim)

            def batch_fn(step, _d=d_index, _ds=dataset):
                rng = np.random.default_rng([config.train.seed, step, _d])
                return {"x": toys.as_points(toys.sample_toy(_ds, rng, tc.batch_size))}

            params, info = train_model(
                config, workdir, mesh, f"{dataset}_{name}", model, batch_fn,
                toys.as_points(ref[:1]), loss_kind, tc.trans_ratio, tc.batch_size)
            entry = {"components": k, "loss": loss_kind, "train": info, "solvers": {}}
            solvers = tc.fm_solvers if loss_kind == "l2" else tc.gm_solvers
            x1 = jax.random.normal(jax.random.key(config.seed + 7), (tc.num_samples, 1, 2))
            for solver in solvers:
                run = _toy_samplers(model, loss_kind, solver)
                rows, per_nfe = [], {}
                t0 = time.time()
                for nfe in tc.nfes:
                    key = jax.random.key(config.seed + 1000 + nfe)
                    if loss_kind == "l2":
                        if solver == "heun" and nfe < 2:
                            per_nfe[str(nfe)] = None       # Heun needs two evaluations
                            rows.append(None)
                            continue
                        x = run(params, x1, key, nfe)
                    else:
                        x = run(params, x1, key, nfe,
                                samplers.default_substeps(nfe, tc.substep_budget))
                    x = np.asarray(x[:, 0], np.float64)
                    finite = np.all(np.isfinite(x), axis=1)
                    xf = x[finite]
                    per_nfe[str(nfe)] = {
                        "swd": metrics.sliced_wasserstein(xf, ref, tc.swd_projections),
                        "mmd": metrics.mmd_rbf(xf[:tc.mmd_samples], ref[:tc.mmd_samples]),
                        "in_square": float(toys.in_white_square(x).mean()),
                        "nonfinite": int((~finite).sum()),
                        "nfe_used": samplers.heun_nfe(nfe) if solver == "heun" else nfe}
                    rows.append(x[:tc.plot_samples])
                entry["solvers"][solver] = {"nfe": per_nfe, "sample_s": time.time() - t0}
                scatter_rows[f"{name} {solver}"] = rows
                pts = [(n, v["swd"]) for n, v in ((int(a), b) for a, b in per_nfe.items()) if v]
                swd_curves[f"{name} {solver}"] = ([p[0] for p in pts], [p[1] for p in pts])
            res["models"][name] = entry
        if mesh_lib.is_primary():
            lim = {"checkerboard": toys.CHECKER_SCALE + 0.5, "moons": 3.5}.get(dataset, 3.0)
            scatter_rows["data"] = [ref[:tc.plot_samples]] + [None] * (len(tc.nfes) - 1)
            plots.scatter_grid(os.path.join(workdir, wd.PLOTS, f"{dataset}_samples.png"),
                               scatter_rows, [f"NFE {n}" for n in tc.nfes], lim=lim,
                               title=dataset)
            plotting.line_plot(os.path.join(workdir, wd.PLOTS, f"{dataset}_swd.png"), swd_curves,
                               xlabel="NFE", ylabel="sliced W2 to data", title=dataset, logy=True,
                               hline=res["reference"]["swd"])
        out[dataset] = res
    return out


# ----------------------------------------------------------------------------- digits part


def _digit_data(dc, seed):
    ds = images.load(dc.dataset, dc.path or None)
    h, w = ds.images.shape[1:3]
    if h % dc.downsample or w % dc.downsample:
        raise config_lib.ConfigError(f"config key 'digits.downsample' = {dc.downsample} is not "
                                     f"allowed; it must divide the {h}×{w} images")
    if dc.downsample > 1:
        ds = images.ImageSet(ds.name, image_data.downsample(ds.images, dc.downsample),
                             ds.labels, ds.class_names)
    train, test = images.split(ds, dc.test_fraction, seed)
    return ds, train, test


def _image_model(dc, h: int, w: int, c: int, k: int, ncls: int):
    """The class-conditional denoiser for (h, w, c) images: `GMFlowMLP` or `GMFlowUNet`."""
    if dc.network == "unet":
        factor = 2 ** (len(dc.unet_features) - 1)
        if h % factor or w % factor:
            raise config_lib.ConfigError(
                f"config key 'digits.unet_features' = {tuple(dc.unet_features)} is not allowed "
                f"for {h}×{w} images: {len(dc.unet_features)} levels need H and W divisible by "
                f"{factor}")
        return GMFlowUNet(height=h, width=w, channels=c, num_components=k,
                          features=tuple(dc.unet_features), num_classes=ncls)
    return GMFlowMLP(groups=h * w, channels=c, num_components=k, width=dc.width,
                     depth=dc.depth, num_classes=ncls)


def train_classifier(config, workdir, mesh, train: images.ImageSet, test: images.ImageSet):
    """The metric classifier (MLP) on the real training split, via train_loop; test accuracy."""
    dc = config.digits
    clf = Classifier(num_classes=train.num_classes)
    opt = optax.adam(1e-3)
    bs = 128

    def init_state(key):
        params = clf.init(key, jnp.asarray(train.images[:1]))
        return {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}

    def train_step(state, batch, key):
        del key

        def loss(p):
            logits = clf.apply(p, batch["x"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()

        value, grads = jax.value_and_grad(loss)(state["params"])
        return (train_loop.apply_gradients(state, grads, opt), {"loss": value})

    def batch_fn(step, rows):
        idx = np.random.default_rng([config.seed, 7, step]).integers(0, len(train), bs)
        return {"x": train.images[idx][rows], "y": train.labels[idx][rows]}

    cfg = train_loop.LoopConfig(num_steps=dc.classifier_steps, log_every=max(dc.classifier_steps // 10, 1),
                                checkpoint_every=dc.classifier_steps, seed=config.seed)
    result = train_loop.train(train_loop.Task(init_state, train_step, batch_fn, bs), cfg,
                              workdir=os.path.join(workdir, "models", "classifier"), mesh=mesh)
    params = jax.device_get(result.state["params"])
    logits = clf.apply(params, jnp.asarray(test.images))
    acc = float(np.mean(np.argmax(np.asarray(logits), -1) == test.labels))
    feats = jax.jit(lambda x: clf.apply(params, x, method=Classifier.features))
    predict = jax.jit(lambda x: jnp.argmax(clf.apply(params, x), -1))
    return feats, predict, acc


_METHODS = {  # method -> (model, guidance kind, solver key, scales key)
    "pg": ("gm", "probabilistic", "gm_solver", "pg_scales"),
    "cfg": ("fm", "cfg", "fm_solver", "cfg_scales"),
    "cfg_gm": ("gm", "cfg", "gm_solver", "cfg_scales"),
}


def run_digits(config, workdir: str, mesh) -> dict:
    """Classifier once, then per seed offset s in `digits.seeds`: models trained with
    `train.seed + s` (named `<dataset>_<gm|fm>` for s = 0, `..._seed<s>` otherwise), sampled
    with `seed + s`, swept over guidance at every NFE. One seed: its sweep is `nfe`; several:
    `per_seed` holds each and `nfe` the mean with standard errors (`<metric>_se`)."""
    dc = config.digits
    if dc.dataset == "fashion_mnist" and not images.available("fashion_mnist", dc.path or None):
        raise config_lib.ConfigError(f"config key 'digits.path' = {dc.path!r}: the Fashion-MNIST "
                                     "files are not there")
    for method in dc.methods:
        _, kind, _, scales_key = _METHODS[method]
        for s in dc[scales_key]:
            guidance.check_scale(kind, s)
    ds, train, test = _digit_data(dc, config.seed)
    h, w, c = ds.images.shape[1:]
    for name, k in (("gm", dc.components), ("fm", 1)):
        _image_model(dc, h, w, c, k, ds.num_classes)          # config errors before training
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
        for nfe, per in results["nfe"].items():
            plotting.line_plot(
                os.path.join(workdir, wd.PLOTS, f"{dc.dataset}_nfe{nfe}_fd_precision.png"),
                {f"{m} ({per[m]['solver']})": ([r["precision"] for r in per[m]["sweep"]],
                                               [r["fd"] for r in per[m]["sweep"]]) for m in per},
                xlabel="precision" + (f" (mean of {len(per_seed)} seeds)" if len(per_seed) > 1
                                      else ""),
                ylabel="Fréchet distance", title=f"{dc.dataset}, NFE {nfe}")
    return results


def _digits_one_seed(config, workdir, mesh, seed, train, feats, predict, real_feats,
                     plot: bool) -> dict:
    """Train (or resume) the GMFlow and flow-matching models for one seed offset and sweep
    every method over its guidance scales at every NFE: {"train", "nfe"}."""
    dc = config.digits
    h, w, c = train.images.shape[1:]
    ncls = train.num_classes
    x_train = (train.images.reshape(len(train), h * w, c) * 2 - 1).astype(np.float32)

    def batch_fn(step):
        idx = np.random.default_rng([config.train.seed + seed, step, 11]).integers(
            0, len(train), dc.batch_size)
        return {"x": x_train[idx], "label": train.labels[idx]}

    models = {}
    for name, k, loss_kind in (("gm", dc.components, dc.loss), ("fm", 1, "l2")):
        if not any(_METHODS[m][0] == name for m in dc.methods):
            continue
        model = _image_model(dc, h, w, c, k, ncls)
        tag = f"{dc.dataset}_{name}" + (f"_seed{seed}" if seed else "")
        params, info = train_model(config, workdir, mesh, tag, model, batch_fn, x_train[:1],
                                   loss_kind, dc.trans_ratio, dc.batch_size, num_classes=ncls,
                                   p_uncond=dc.p_uncond, seed_offset=seed)
        models[name] = (model, params, info)

    labels = jnp.asarray(np.repeat(np.arange(ncls), dc.samples_per_class), jnp.int32)
    x1 = jax.random.normal(jax.random.key(config.seed + seed + 5), (labels.shape[0], h * w, c))

    def make_run(name, kind, solver):
        model = models[name][0]

        def x0_fn(params, x, t, lab):
            gm_u = model.apply(params, x, jnp.full((x.shape[0],), t, x.dtype), lab)
            return denoising.u_to_x0(gm_u, x, t)

        def run(params, key, nfe, substeps, scale):
            den = _guided(x0_fn, params, labels, ncls, kind, scale, dc.orthogonal)
            if solver in samplers.GM_SOLVERS:
                return samplers.gm_sample(den, x1, key, nfe=nfe, solver=solver, substeps=substeps,
                                          guidance=scale if kind == "probabilistic" else 0.0)
            vel = lambda x, t: (x - mixture.mean(den(x, t))) / t
            return samplers.fm_sample(vel, x1, key, nfe=nfe, solver=solver)

        return jax.jit(run, static_argnums=(2,) if solver not in samplers.GM_SOLVERS else ())

    out = {"train": {n: m[2] for n, m in models.items()}, "nfe": {}}
    for nfe in dc.nfes:
        sub = samplers.default_substeps(nfe, dc.substep_budget)
        per, strips = {}, {}
        for method in dc.methods:
            name, kind, solver_key, scales_key = _METHODS[method]
            solver = dc[solver_key]
            run = make_run(name, kind, solver)
            rows = []
            for scale in dc[scales_key]:
                key = jax.random.key(config.seed + seed + 31 * nfe)
                x = np.asarray(run(models[name][1], key, nfe, sub, float(scale)))
                imgs = ((x + 1) / 2).reshape(-1, h, w, c)
                clipped = np.clip(np.nan_to_num(imgs, nan=0.5), 0, 1).astype(np.float32)
                f = np.asarray(feats(jnp.asarray(clipped)))
                prec, rec = metrics.knn_precision_recall(real_feats, f, dc.knn_k)
                rows.append({"scale": float(scale),
                             "fd": metrics.frechet_distance(f, real_feats),
                             "precision": prec, "recall": rec,
                             "saturation": metrics.saturation(imgs),
                             "out_of_range": metrics.out_of_range(imgs),
                             "accuracy": float(np.mean(np.asarray(predict(jnp.asarray(clipped)))
                                                       == np.asarray(labels)))})
                pick = np.concatenate([np.flatnonzero(np.asarray(labels) == k)[:2]
                                       for k in range(ncls)])
                strips[f"{method} {scale:g}"] = clipped[pick]
            per[method] = {"solver": solver, "sweep": rows}
        out["nfe"][str(nfe)] = per
        if plot and mesh_lib.is_primary():
            plots.image_rows(os.path.join(workdir, wd.PLOTS, f"{dc.dataset}_nfe{nfe}.png"),
                             strips, title=f"{dc.dataset}, NFE {nfe} (2 samples per class)")
    return out


def _guided(x0_fn, params, labels, null, kind, scale, orthogonal):
    return guidance.guided_denoiser(lambda x, t, lab: x0_fn(params, x, t, lab), labels, null,
                                    kind, scale, orthogonal)


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
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
