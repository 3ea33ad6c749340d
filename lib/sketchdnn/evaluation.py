"""Evaluation of a trained SketchDNN denoiser: samples, sample quality, NLL bound, figures.

    jitted(config, run, process, model) -> (sample, bound)   compiled once per shape settings
    draw_samples -> (num_samples, S, 21) x̂₀;  nll_bits -> bound terms (bits), mean and s.e.

The NLL bound of a Gaussian-Softmax model is evaluated under both reverse
parameterisations of x̂₀'s logits (`label_process.X0_LOGITS`: 2·log p̂ and Σ p̂·u), with the
same weights, test sketches and noise draws. Each is a valid bound (an ELBO of the reverse
process that plugs in that x̂₀); the model's bound is the tighter (lower) of the two, and
both are kept under "by_x0_logits". The sampler uses `diffusion.x0_logits` of the config.
    sample_quality -> FD, k-NN precision/recall (encoder features of 32×32 rasters),
                      validity, repaired fraction, type / count total variation
"""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np

from lib.toolbox import plotting
from lib.sketchdnn import diffusion, metrics
from lib.sketchdnn import loss as loss_lib
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.label_process import X0_LOGITS

# salts of the evaluation keys of run i: key(seed + SAMPLE_STREAM + i) draws its final
# samples, key(seed + CURVE_STREAM + i) its curve samples, key(seed + NLL_STREAM) the NLL bound
SAMPLE_STREAM = 101
NLL_STREAM = 202
CURVE_STREAM = 303

_JITTED: dict = {}


def jitted(config, run: str, process, model):
    """(sample(params, key), bound(params, x, key)) jitted once per run and shape settings,
    so a rerun in the same process (tests, resume) reuses the compiled functions."""
    m, df, ev = config.model, config.diffusion, config.eval
    key = (run, df.num_steps, df.sample_steps, df.nll_bins, df.x0_logits, m.width, m.depth,
           m.heads, m.mlp_ratio, ev.sample_batch, config.data.num_slots)
    if key not in _JITTED:
        procs = bound_processes(process)

        def sample(p, k):
            return diffusion.sample(process, lambda x, t: model.apply(p, x, t), k,
                                    ev.sample_batch, config.data.num_slots, df.sample_steps)

        def bound(p, x, k):
            def terms(proc):
                return loss_lib.nll_bound(proc, lambda xt, t: model.apply(p, xt, t), x, k,
                                          bins=df.nll_bins)
            if procs is None:
                return terms(process)
            return {f"{name}/{term}": v for name, proc in procs.items()
                    for term, v in terms(proc).items()}

        _JITTED[key] = (jax.jit(sample), jax.jit(bound))
    return _JITTED[key]


def bound_processes(process: diffusion.Process) -> dict | None:
    """{x0_logits: the process with that reverse parameterisation} of a Gaussian-Softmax
    process (the bound is evaluated under each); None for the baselines' processes."""
    if process.kind != "gaussian_softmax":
        return None
    return {name: diffusion.make_process(process.kind, process.num_steps, name)
            for name in X0_LOGITS}


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
    """Mean and standard error of the bound terms over test sketches × nll_repeats; for a
    bound under several parameterisations (`jitted`), those of the tighter one plus
    "x0_logits" (its name) and "by_x0_logits" ({name: its terms})."""
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
    return tightest(out)


def tightest(terms: dict) -> dict:
    """{"name/term": v} of several parameterisations -> the terms of the one with the lowest
    "total", with "x0_logits" and "by_x0_logits"; terms without a "/" are returned as they are."""
    if not any("/" in k for k in terms):
        return terms
    by: dict[str, dict] = {}
    for k, v in terms.items():
        name, term = k.split("/", 1)
        by.setdefault(name, {})[term] = v
    best = min(by, key=lambda name: by[name]["total"])
    return {**by[best], "x0_logits": best, "by_x0_logits": by}


def sample_quality(config, feat_fn, enc_params, real_feats, x: np.ndarray,
                   ref_validity) -> dict:
    """The quality of sketches `x` against the test set (features and validity shares)."""
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


def feature_fn(encoder, num_classes: int):
    """The encoder's jitted feature function, cached like `jitted`."""
    key = ("encoder", num_classes)
    if key not in _JITTED:
        _JITTED[key] = metrics.feature_fn(encoder)
    return _JITTED[key]


def write_plots(plot_dir: str, tag: str, grids: dict, curves: dict) -> None:
    """samples_<name>.png per non-empty grid of decoded sketches, and train_loss.png."""
    for name, sketches in grids.items():
        if sketches:
            sk.render_png(os.path.join(plot_dir, f"samples_{name}.png"), sketches,
                          title=f"{name} ({tag})")
    plotting.line_plot(os.path.join(plot_dir, "train_loss.png"), curves, xlabel="step",
                       ylabel="training loss", title=tag, logy=True)
