"""Evaluation of a trained emulator on the test trajectories: rollouts, scores, plots.

`evaluate` rolls every test trajectory out from its first frame for `eval.n_steps` macro
steps and scores it against the stored frames (`lib.multipdenet.metrics`);
`evaluate_classical` does the same for the dataset's classical solver on the same coarse
grid, the reference a learned model must beat. `validation` is the error tracked during
training, `write_plots` draws the snapshots, every model's correlation curve and the training
loss into `<workdir>/plots/`, and `headline` is the run's one-line summary.
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import config as config_lib, metrics as metrics_lib, train_loop
from lib.common import workdir as wd
from lib.multipdenet import data as data_lib, metrics as mpn_metrics
from lib.multipdenet.training import build_emulator, window_loss
from lib.pde import navier_stokes
from lib.toolbox import plotting

NAMES = {"multipdenet": "MultiPDENet", "fno": "FNO", "unet": "UNet",
         "coarse_solver": "classical solver"}
VALIDATION_METRIC = "rollout_mse"


def rollout_test(emulator, params, test: np.ndarray, n_steps: int, batch: int) -> np.ndarray:
    """Predictions `(n_test, n_steps, *grid, C)` from each test trajectory's first frame."""
    run = jax.jit(lambda p, u0: jnp.swapaxes(emulator.rollout(p, u0, n_steps), 0, 1))
    chunks = [np.asarray(run(params, jnp.asarray(test[i:i + batch, 0])))
              for i in range(0, len(test), batch)]
    return np.concatenate(chunks)


def first_nonfinite_step(pred: np.ndarray) -> int | None:
    bad = ~np.isfinite(pred.reshape(pred.shape[0], pred.shape[1], -1)).all(axis=(0, 2))
    return int(np.argmax(bad)) + 1 if bad.any() else None


def evaluate(config, emulator, params, test: np.ndarray, metadata: dict) -> tuple[dict, np.ndarray]:
    n_steps = config.eval.n_steps if config.eval.n_steps > 0 else test.shape[1] - 1
    t0 = time.perf_counter()
    pred = rollout_test(emulator, params, test, n_steps, config.eval.batch_size)
    rollout_s = time.perf_counter() - t0
    truth = test[:, 1:n_steps + 1]
    bad = first_nonfinite_step(pred)
    if bad is not None:
        logging.warning("the rollout became non-finite at macro step %d (t = %.4g)", bad,
                        bad * metadata["frame_dt"])
    scores = mpn_metrics.evaluate_rollouts(jnp.asarray(pred), jnp.asarray(truth),
                                           metadata["frame_dt"], config.eval.hct_threshold)
    out = {name: [float(np.asarray(mean)), float(np.asarray(std))]
           for name, (mean, std) in scores.items() if name != "correlation"}
    out["correlation_mean"] = np.asarray(scores["correlation"][0]).tolist()
    out["correlation_std"] = np.asarray(scores["correlation"][1]).tolist()
    out["eval_steps"] = n_steps
    out["horizon"] = n_steps * metadata["frame_dt"]
    out["rollout_wall_s_incl_compile"] = rollout_s
    out["nonfinite_step"] = bad
    per_ic = np.asarray(jax.vmap(mpn_metrics.rmse)(jnp.asarray(pred), jnp.asarray(truth)))
    finite = np.isfinite(pred.reshape(len(pred), -1)).all(axis=1)
    out["rmse_per_ic"] = per_ic.tolist()
    out["n_trajectories"], out["n_diverged"] = len(finite), int((~finite).sum())
    # over the trajectories that stayed finite (all of them: the same as "rmse")
    out["rmse_finite"] = ([float(np.mean(per_ic[finite])), float(np.std(per_ic[finite]))]
                          if finite.any() else None)
    return out, pred


def evaluate_classical(config, test: np.ndarray, metadata: dict) -> tuple[dict, np.ndarray]:
    """`evaluate` of the dataset's classical solver on the model's coarse grid
    (`model.name = coarse_solver`, with `baseline.solver_steps_per_frame`)."""
    config = config_lib.apply_overrides(config, {"model.name": "coarse_solver"})
    return evaluate(config, build_emulator(config, metadata), {}, test, metadata)


def validation(config, emulator, train_data: np.ndarray) -> train_loop.Validation:
    """The error `train_loop.train` records every `train.checkpoint_every` steps (and at
    step 0) as `val_rollout_mse`: the MSE of rollouts over `4 × train.window` macro steps
    (at most the trajectories' length) from `eval.batch_size` fixed windows of the training
    trajectories, a batch no training step draws. Not held out: it tracks learning on a
    fixed batch, longer than the windows trained on; the test set stays unseen."""
    window = validation_window(config, train_data.shape[1])
    batch = data_lib.window_batch(train_data, config.train.num_steps, config.train.seed,
                                  config.eval.batch_size, window)
    loss = jax.jit(lambda params, b: window_loss(emulator, params, b, window))
    return train_loop.Validation(
        evaluate=lambda state: {VALIDATION_METRIC: loss(state["params"], batch)},
        every=config.train.checkpoint_every, metric=VALIDATION_METRIC)


def _display_field(frames: np.ndarray, metadata: dict) -> tuple[np.ndarray, str]:
    """(T, *grid, C) -> the scalar field a person looks at: vorticity for NS, else channel 0."""
    if metadata["pde"] == "navier_stokes":
        f = np.moveaxis(frames, -1, 1)
        vort = jax.vmap(lambda v: navier_stokes.velocity_to_vorticity(v, metadata["length"]))(f)
        return np.asarray(vort), "vorticity"
    return frames[..., 0], metadata["fields"][0]


def write_plots(workdir: str, config, metadata: dict, test: np.ndarray, pred: np.ndarray,
                results: dict) -> list[str]:
    """snapshots.png (test trajectory 0), correlation.png (the model and each entry of
    `results["baselines"]`, with the HCT threshold) and, when the workdir has training
    metrics, train_loss.png (the loss, its moving median and the validation error)."""
    plots = os.path.join(workdir, wd.PLOTS)
    model = NAMES.get(config.model.name, config.model.name)
    grid = "×".join([str(metadata["coarse_grid"])] * (1 if metadata["pde"] == "kdv" else 2))
    name = f"{model} on {metadata['pde']}"
    n = pred.shape[1]
    idx = np.unique(np.linspace(0, n - 1, config.eval.n_snapshots).astype(int))
    truth, label = _display_field(test[0, 1:][idx], metadata)
    guess, _ = _display_field(pred[0][idx], metadata)
    times = [f"t = {(i + 1) * metadata['frame_dt']:.3g}" for i in idx]
    paths = []
    if truth.ndim == 3:
        paths.append(plotting.field_grid(
            os.path.join(plots, "snapshots.png"), [list(truth), list(guess), list(guess - truth)],
            row_titles=["truth", "prediction", "error"], col_titles=times,
            title=f"{name} ({grid}): {label}, test trajectory 0"))
    else:  # 1-D: curves at the snapshot times
        x = np.arange(truth.shape[-1]) * metadata["length"] / truth.shape[-1]
        series = {}
        for j, t in enumerate(times):
            series[f"truth {t}"] = (x, truth[j])
            series[f"pred {t}"] = (x, guess[j])
        paths.append(plotting.line_plot(os.path.join(plots, "snapshots.png"), series, xlabel="x",
                                        ylabel=label, title=f"{name}: test trajectory 0"))
    curves, lowest = {}, config.eval.hct_threshold
    for key, r in {config.model.name: results, **results.get("baselines", {})}.items():
        t = (np.arange(len(r["correlation_mean"])) + 1) * metadata["frame_dt"]
        diverged = (f" ({r['n_diverged']}/{r['n_trajectories']} ICs diverged, first at "
                    f"t = {r['nonfinite_step'] * metadata['frame_dt']:.3g})"
                    if r.get("n_diverged") else "")
        curves[f"{NAMES.get(key, key)}: HCT {hct_text(r)}{diverged}"] = (
            t, r["correlation_mean"], r["correlation_std"])
        lowest = min(lowest, float(np.min(r["correlation_mean"])))
    paths.append(plotting.correlation_curves(   # a correlation band ends at 1
        os.path.join(plots, "correlation.png"), curves, highlight=next(iter(curves)),
        threshold=config.eval.hct_threshold, ylim=(max(-1.0, lowest - 0.1), 1.01), legend_cols=1,
        ylabel=f"Pearson correlation (mean ± std over {len(test)} test ICs)",
        title=f"{metadata['pde']} on {grid}: correlation with the truth (a diverged IC counts 0)"))
    rows = metrics_lib.read_metrics(workdir)
    loss = [r for r in rows if "loss" in r]
    val = [r for r in rows if f"val_{VALIDATION_METRIC}" in r]
    if loss:
        label = (f"validation: {validation_window(config, metadata['n_frames'])}-step rollout "
                 "MSE, fixed training batch")
        points = {label: ([r["step"] for r in val],
                          [r[f"val_{VALIDATION_METRIC}"] for r in val])} if val else {}
        paths.append(plotting.loss_curve(
            os.path.join(plots, "train_loss.png"), [r["step"] for r in loss],
            [r["loss"] for r in loss], points=points, window=max(3, len(loss) // 4 | 1),
            label=f"training loss: {config.train.window}-step window MSE, mean of each "
                  f"{config.train.log_every} steps", ylabel="MSE (log scale)",
            title=f"{name} ({grid}): training"))
    return paths


def validation_window(config, n_frames: int) -> int:
    """Macro steps of a `validation` rollout, for trajectories of `n_frames` frames."""
    return min(4 * config.train.window, n_frames - 1)


def hct_text(r: dict) -> str:
    """"1.84 ± 0.47", or "≥ 2 (capped at the horizon)" when every trajectory stayed above
    the threshold to the horizon (the metric is then a lower bound)."""
    mean, std = r["hct"]
    if mean >= r["horizon"] * (1 - 1e-6):
        return f"≥ {r['horizon']:.3g} (capped at the horizon)"
    return f"{mean:.3g} ± {std:.2g}"


def rmse_text(r: dict, model: dict | None = None, name: str = "") -> str:
    """"0.0093 ± 0.0018"; when some trajectories diverged, over the others, saying how many
    and, given the `model`'s results (called `name`), the model's RMSE on the same ones."""
    if not r["n_diverged"]:
        return f"{r['rmse'][0]:.3g} ± {r['rmse'][1]:.2g}"
    if r["rmse_finite"] is None:
        return "diverged on every test IC"
    text = (f"{r['rmse_finite'][0]:.3g} ± {r['rmse_finite'][1]:.2g} over the "
            f"{r['n_trajectories'] - r['n_diverged']} of {r['n_trajectories']} ICs it kept finite")
    if model is not None:
        kept = np.isfinite(np.asarray(r["rmse_per_ic"], np.float64))
        same = np.asarray(model["rmse_per_ic"], np.float64)[kept]
        text += f" ({name} on those: {np.mean(same):.3g} ± {np.std(same):.2g})"
    return text


def headline(results: dict, workdir: str, plots: bool = True) -> str:
    """The run's last line: where results.json and the plots are, then RMSE and HCT of
    the model and of each baseline in `results["baselines"]`."""
    models = {results["model"]: results, **results.get("baselines", {})}
    own = NAMES.get(results["model"], results["model"])
    rmse = ", ".join(f"{NAMES.get(k, k)} {rmse_text(r, None if r is results else results, own)}"
                     for k, r in models.items())
    hct = ", ".join(f"{NAMES.get(k, k)} {hct_text(r)}" for k, r in models.items())
    where = os.path.join(workdir, wd.PLOTS) if plots else "none (eval.plots = False)"
    return (f"results: {os.path.join(workdir, wd.RESULTS)} | plots: {where} | "
            f"RMSE over t ≤ {results['horizon']:.3g}: {rmse} | HCT: {hct}")
