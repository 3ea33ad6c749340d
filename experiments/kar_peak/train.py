"""KAR/PEAK experiment: image inpainting grid (method × image × mask) and the 1-D alignment demo.

`train_and_evaluate(config, workdir)`:
  1. validates the config (lib.kar_peak.config_schema) before any compute;
  2. images: for every image and method, the fits of all masks are trained together
     (vmapped, `lib.kar_peak.training`) by `lib.common.train_loop` in
     `<workdir>/fits/<image>/<method>/` (checkpoints, metrics.jsonl, resume); then PSNR / SSIM
     on the missing pixels and the centred NTK–target alignment at init and after training on
     `eval.ntk_points` random pixels;
  3. regression: the 1-D band-limited GP task with its closed-form optimal kernel K*; every
     method is fitted (KAR = the 'ntk' form, 1 − A(Θ, K*)), and test MSE and A(Θ, K*) on the
     test grid are measured at init and after training;
  4. writes results.json, results.md and plots/*.png (reconstructions, NTK eigen-spectra,
     regression fits).
Rerunning on the same workdir resumes every fit from its newest checkpoint; finished fits
are only re-evaluated.
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import extras
from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import guards
from lib.common import report, train_loop
from lib.common.stages import Stages
from lib.common import workdir as wd
from lib.kar_peak import training
from lib.kar_peak import metrics, plots, tasks
from lib.kar_peak.config_schema import KEYS, RENAMED_KEYS, validate
from lib.kar_peak.ntk import empirical_ntk, relu_ntk_infinite
from lib.kar_peak.report import tables, targets
from lib.kar_peak.config_schema import optional_modules


def _mask_list(config) -> list[np.ndarray]:
    d = config.data
    out = []
    for i, kind in enumerate(d.masks):
        frac = d.random_fraction if kind == "random" else d.patch_fraction
        out.append(tasks.make_mask(kind, d.size, fraction=frac, patch=d.patch_size, seed=d.mask_seed + i))
    return out


def _fit_dir(workdir: str, group: str, method: str) -> str:
    """The stage folder of one fit: <workdir>/fits/<group>/<method, '+' as '_'>."""
    return Stages(workdir, "fits").dir(f"{group}/{method.replace('+', '_')}")


def _ntk_fn(fit, points, chunk):
    pts = jnp.asarray(points)
    return jax.jit(lambda p: empirical_ntk(fit.model.apply, p["inr"], pts, pts, method="jacobian", chunk=chunk))


def run_images(config, workdir: str, mesh) -> dict:
    """The inpainting grid (`guards.Preempted` on SIGTERM; rerun resumes)."""
    d = config.data
    masks = _mask_list(config)
    coords = tasks.grid_coords(d.size, d.size)
    n = coords.shape[0]
    rng = np.random.default_rng(tasks.NTK_POINTS_STREAM)
    eval_idx = np.sort(rng.choice(n, config.eval.ntk_points, replace=False))
    loop_cfg = train_loop.LoopConfig.from_config(config.train)
    rows, spectra, recons = [], {}, {}
    for image in d.images:
        img = tasks.load_image(image, d.size, d.colour, d.texture_crop)
        c = img.shape[-1]
        y = np.repeat(img.reshape(n, 1, c), len(masks), axis=1)
        w = np.stack([~m.ravel() for m in masks], axis=1).astype(np.float32)
        problem = training.FitProblem(coords, y, w, (d.size, d.size))
        y_eval = jnp.asarray(img.reshape(n, c)[eval_idx])
        recons[image] = {"truth": img, "masks": masks, "pred": {}}
        spectra[image] = {}
        for method in config.methods:
            guards.check_preempted(f"fit {image}/{method}")
            fit = training.make_fit(problem, method, config)
            t0 = time.time()
            res = train_loop.train(fit.task, loop_cfg, workdir=_fit_dir(workdir, image, method), mesh=mesh)
            train_s = time.time() - t0
            params = jax.device_get(res.state["params"])
            params0 = jax.device_get(jax.jit(fit.task.init_state)(jax.random.key(config.train.seed))["params"])
            pred = np.clip(np.asarray(fit.predict(params)), 0.0, 1.0).reshape(len(masks), d.size, d.size, c)
            terms = jax.device_get(fit.loss_terms(params))
            ntk = _ntk_fn(fit, coords[eval_idx], config.eval.ntk_chunk)
            recons[image]["pred"][method] = pred
            for v, (kind, mask) in enumerate(zip(d.masks, masks)):
                k0, k1 = ntk(training.unstack(params0, v)), ntk(training.unstack(params, v))
                if v == 0:
                    spectra[image][method] = (np.linalg.eigvalsh(np.asarray(k0))[::-1],
                                              np.linalg.eigvalsh(np.asarray(k1))[::-1])
                rows.append(dict(
                    image=image, mask=kind, method=method, missing_fraction=float(mask.mean()),
                    psnr_missing=metrics.psnr_missing(pred[v], img, mask),
                    ssim_missing=metrics.ssim_missing(pred[v], img, mask),
                    psnr_all=metrics.psnr(pred[v], img),
                    train_mse=float(terms["data"][v]), kar=float(terms["kar"][v]),
                    align_init=float(metrics.target_alignment(k0, y_eval, centered=True)),
                    align_final=float(metrics.target_alignment(k1, y_eval, centered=True)),
                    align_init_uncentred=float(metrics.target_alignment(k0, y_eval)),
                    align_final_uncentred=float(metrics.target_alignment(k1, y_eval)),
                    train_s=train_s, steps=res.step))
            logging.info("%s %s: PSNR(missing) %s", image, method,
                         [f"{r['psnr_missing']:.2f}" for r in rows[-len(masks):]])
    if config.eval.plots and mesh_lib.is_primary():
        for image, rec in recons.items():
            plots.reconstructions(os.path.join(workdir, "plots", f"recon_{image}.png"), rec, d.masks)
            plots.spectra(os.path.join(workdir, "plots", f"ntk_spectrum_{image}.png"), spectra[image],
                          f"{image}, {d.masks[0]} mask: empirical NTK eigenvalues")
    return {"rows": rows}


def _regression_config(config):
    c = config.copy_and_resolve_references()
    c.unlock()
    c.kar.form = "ntk"
    c.kar.weight = config.regression.kar_weight
    c.inr.rff_sigma = config.regression.rff_sigma
    c.inr.peak_sigma = config.regression.peak_sigma
    return c


def run_regression(config, workdir: str, mesh) -> dict:
    """The 1-D alignment demo (`guards.Preempted` on SIGTERM)."""
    r = config.regression
    data = tasks.gp_regression(n_train=r.n_train, n_test=r.n_test, max_freq=r.max_freq, centre=r.centre,
                               width=r.width, noise=r.noise, seed=r.seed, num_draws=r.num_draws)
    idx = np.round(np.linspace(0, r.n_test - 1, r.kar_points)).astype(int)
    problem = training.FitProblem(data.x_train, data.y_train[:, :, None], np.ones_like(data.y_train),
                                 ntk_points=data.x_test[idx], ntk_target=data.k_opt[:, idx][:, :, idx])
    rcfg = _regression_config(config)
    loop_cfg = dataclasses.replace(train_loop.LoopConfig.from_config(config.train), num_steps=r.num_steps,
                                   log_every=max(1, r.num_steps // r.num_logs),
                                   checkpoint_every=max(1, r.num_steps // r.num_checkpoints))
    x_test = jnp.asarray(data.x_test)
    bayes = np.mean(np.square(data.post_mean - data.f_test), axis=0)
    out = {"bayes_mse": float(bayes.mean()), "signal_power": float(np.mean(np.square(data.f_test))), "methods": {}}
    aug = np.concatenate([data.x_test, np.ones_like(data.x_test)], axis=1)
    k_inf = np.asarray(relu_ntk_infinite(jnp.asarray(aug), jnp.asarray(aug), config.inr.depth))
    out["relu_infinite_alignment"] = float(np.mean([metrics.alignment(k_inf, data.k_opt[v])
                                                    for v in range(r.num_draws)]))
    curves = {}
    for method in r.methods:
        guards.check_preempted(f"fit regression/{method}")
        fit = training.make_fit(problem, method, rcfg)
        res = train_loop.train(fit.task, loop_cfg, workdir=_fit_dir(workdir, "regression", method), mesh=mesh)
        params = jax.device_get(res.state["params"])
        params0 = jax.device_get(jax.jit(fit.task.init_state)(jax.random.key(config.train.seed))["params"])
        predict = jax.jit(jax.vmap(lambda p, m=fit.model: m.apply(p["inr"], x_test)))
        pred = np.asarray(predict(params))[..., 0].T                       # (m, V)
        ntk = _ntk_fn(fit, data.x_test, config.eval.ntk_chunk)
        a0, a1 = [], []
        for v in range(r.num_draws):
            a0.append(float(metrics.alignment(ntk(training.unstack(params0, v)), data.k_opt[v])))
            a1.append(float(metrics.alignment(ntk(training.unstack(params, v)), data.k_opt[v])))
        mse = np.mean(np.square(pred - data.f_test), axis=0)
        out["methods"][method] = dict(test_mse=float(mse.mean()), test_mse_per_draw=mse.tolist(),
                                      align_init=float(np.mean(a0)), align_final=float(np.mean(a1)),
                                      align_final_per_draw=a1)
        curves[method] = pred[:, 0]
    if config.eval.plots and mesh_lib.is_primary():
        plots.regression(os.path.join(workdir, "plots", "regression_fit.png"), data, curves)
    return out


def train_and_evaluate(config, workdir: str):
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added=config_lib.added_of(KEYS), renamed=RENAMED_KEYS)
    t0 = time.time()
    results = {"tag": config.tag, "machine": report.machine()}
    if "images" in config.parts:
        results["images"] = run_images(config, workdir, mesh)
    if "regression" in config.parts:
        results["regression"] = run_regression(config, workdir, mesh)
    results["wall_s"] = time.time() - t0
    results["targets"] = targets(results, config.methods)
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), tables(results) + "\n")
    return results
