"""The class-conditional image protocol: data, denoisers, and the guidance sweep per seed.

    METHODS[m] = (model "gm"|"fm", guidance kind, solver key, scales key)   m in pg, cfg, cfg_gm
    check(dc)                       config errors before any training
    load(dc, seed) -> (ds, train, test)     images in [0, 1], optionally downsampled
    image_model(dc, h, w, c, K, ncls)       GMFlowMLP or GMFlowUNet
    sweep(config, seed, models, train, feats, predict, real_feats, plot_dir)
        -> {nfe: {method: {"solver", "sweep": [{scale, fd, precision, recall, saturation,
                                                 out_of_range, accuracy}]}}}

Samples are `digits.samples_per_class` per class from one fixed noise draw per seed; FD and
k-NN precision/recall are on the metric classifier's features of the clipped images.
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.toolbox import plotting
from lib.common import workdir as wd
from lib.data import images
from lib.gmflow import denoising, guidance, image_data, metrics, mixture, plots, samplers
from lib.gmflow.networks import GMFlowMLP, GMFlowUNet

METHODS = {  # method -> (model, guidance kind, solver key, scales key)
    "pg": ("gm", "probabilistic", "gm_solver", "pg_scales"),
    "cfg": ("fm", "cfg", "fm_solver", "cfg_scales"),
    "cfg_gm": ("gm", "cfg", "gm_solver", "cfg_scales"),
}


def check(dc) -> None:
    """ConfigError when the Fashion-MNIST files are missing or a guidance scale is invalid."""
    if dc.dataset == "fashion_mnist" and not images.available("fashion_mnist", dc.path or None):
        raise config_lib.ConfigError(f"config key 'digits.path' = {dc.path!r}: the Fashion-MNIST "
                                     "files are not there")
    for method in dc.methods:
        _, kind, _, scales_key = METHODS[method]
        for s in dc[scales_key]:
            guidance.check_scale(kind, s)


def load(dc, seed):
    """(full set, train split, test split), downsampled by `dc.downsample`."""
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


def image_model(dc, h: int, w: int, c: int, k: int, ncls: int):
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


def _sampler(model, labels, x1, ncls: int, kind: str, solver: str, orthogonal: bool):
    """A jitted (params, key, nfe, substeps, scale) -> guided samples (n, h*w, c)."""
    def x0_fn(params, x, t, lab):
        gm_u = model.apply(params, x, jnp.full((x.shape[0],), t, x.dtype), lab)
        return denoising.u_to_x0(gm_u, x, t)

    def run(params, key, nfe, substeps, scale):
        den = guidance.guided_denoiser(lambda x, t, lab: x0_fn(params, x, t, lab), labels, ncls,
                                       kind, scale, orthogonal)
        if solver in samplers.GM_SOLVERS:
            return samplers.gm_sample(den, x1, key, nfe=nfe, solver=solver, substeps=substeps,
                                      guidance=scale if kind == "probabilistic" else 0.0)
        vel = lambda x, t: (x - mixture.mean(den(x, t))) / t
        return samplers.fm_sample(vel, x1, key, nfe=nfe, solver=solver)

    return jax.jit(run, static_argnums=(2,) if solver not in samplers.GM_SOLVERS else ())


def _row(x, labels, h, w, c, scale, feats, predict, real_feats, knn_k):
    """The metrics of one guided sample set and its clipped images."""
    imgs = ((x + 1) / 2).reshape(-1, h, w, c)
    clipped = np.clip(np.nan_to_num(imgs, nan=0.5), 0, 1).astype(np.float32)
    f = np.asarray(feats(jnp.asarray(clipped)))
    prec, rec = metrics.knn_precision_recall(real_feats, f, knn_k)
    return {"scale": float(scale), "fd": metrics.frechet_distance(f, real_feats),
            "precision": prec, "recall": rec, "saturation": metrics.saturation(imgs),
            "out_of_range": metrics.out_of_range(imgs),
            "accuracy": float(np.mean(np.asarray(predict(jnp.asarray(clipped)))
                                      == np.asarray(labels)))}, clipped


def sweep(config, seed: int, models: dict, train, feats, predict, real_feats,
          plot_dir: str | None) -> dict:
    """Every method of `digits.methods` over its scales at every NFE, for one seed offset.
    `models[name] = (module, EMA params)`; with `plot_dir`, image strips per NFE go there."""
    dc = config.digits
    h, w, c = train.images.shape[1:]
    ncls = train.num_classes
    labels = jnp.asarray(np.repeat(np.arange(ncls), dc.samples_per_class), jnp.int32)
    x1 = jax.random.normal(jax.random.key(config.seed + seed + 5), (labels.shape[0], h * w, c))
    pick = np.concatenate([np.flatnonzero(np.asarray(labels) == k)[:2] for k in range(ncls)])
    out = {}
    for nfe in dc.nfes:
        sub = samplers.default_substeps(nfe, dc.substep_budget)
        per, strips = {}, {}
        for method in dc.methods:
            name, kind, solver_key, scales_key = METHODS[method]
            solver = dc[solver_key]
            run = _sampler(models[name][0], labels, x1, ncls, kind, solver, dc.orthogonal)
            rows = []
            for scale in dc[scales_key]:
                key = jax.random.key(config.seed + seed + 31 * nfe)
                x = np.asarray(run(models[name][1], key, nfe, sub, float(scale)))
                row, clipped = _row(x, labels, h, w, c, scale, feats, predict, real_feats,
                                    dc.knn_k)
                rows.append(row)
                strips[f"{method} {scale:g}"] = clipped[pick]
            per[method] = {"solver": solver, "sweep": rows}
        out[str(nfe)] = per
        if plot_dir is not None and mesh_lib.is_primary():
            plots.image_rows(os.path.join(plot_dir, f"{dc.dataset}_nfe{nfe}.png"),
                             strips, title=f"{dc.dataset}, NFE {nfe} (2 samples per class)")
    return out


def plot_fd_precision(workdir: str, dataset: str, nfe_results: dict, n_seeds: int) -> None:
    """plots/<dataset>_nfe<N>_fd_precision.png: FD against precision per method."""
    for nfe, per in nfe_results.items():
        plotting.line_plot(
            os.path.join(workdir, wd.PLOTS, f"{dataset}_nfe{nfe}_fd_precision.png"),
            {f"{m} ({per[m]['solver']})": ([r["precision"] for r in per[m]["sweep"]],
                                           [r["fd"] for r in per[m]["sweep"]]) for m in per},
            xlabel="precision" + (f" (mean of {n_seeds} seeds)" if n_seeds > 1 else ""),
            ylabel="Fréchet distance", title=f"{dataset}, NFE {nfe}")
