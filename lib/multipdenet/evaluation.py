"""Evaluation of a trained emulator on the test trajectories: rollouts, scores, plots.

`evaluate` rolls every test trajectory out from its first frame for `eval.n_steps` macro
steps and scores it against the stored frames (`lib.multipdenet.metrics`); `write_plots`
draws the snapshots, the correlation curve and the training loss into `<workdir>/plots/`.
"""
from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from absl import logging

from lib.common import metrics as metrics_lib, plotting, workdir as wd
from lib.multipdenet import metrics as mpn_metrics
from lib.pde import navier_stokes


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
    return out, pred


def _display_field(frames: np.ndarray, metadata: dict) -> tuple[np.ndarray, str]:
    """(T, *grid, C) -> the scalar field a person looks at: vorticity for NS, else channel 0."""
    if metadata["pde"] == "navier_stokes":
        f = np.moveaxis(frames, -1, 1)
        vort = jax.vmap(lambda v: navier_stokes.velocity_to_vorticity(v, metadata["length"]))(f)
        return np.asarray(vort), "vorticity"
    return frames[..., 0], metadata["fields"][0]


def write_plots(workdir: str, config, metadata: dict, test: np.ndarray, pred: np.ndarray,
                results: dict) -> list[str]:
    plots = os.path.join(workdir, wd.PLOTS)
    name = f"{config.model.name} on {metadata['pde']}"
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
            title=f"{name}: {label}, test trajectory 0"))
    else:  # 1-D: curves at the snapshot times
        x = np.arange(truth.shape[-1]) * metadata["length"] / truth.shape[-1]
        series = {}
        for j, t in enumerate(times):
            series[f"truth {t}"] = (x, truth[j])
            series[f"pred {t}"] = (x, guess[j])
        paths.append(plotting.line_plot(os.path.join(plots, "snapshots.png"), series, xlabel="x",
                                        ylabel=label, title=f"{name}: test trajectory 0"))
    t = (np.arange(len(results["correlation_mean"])) + 1) * metadata["frame_dt"]
    paths.append(plotting.correlation_curves(
        os.path.join(plots, "correlation.png"),
        {name: (t, results["correlation_mean"], results["correlation_std"])}, highlight=name,
        threshold=config.eval.hct_threshold, ylabel="Pearson correlation (mean ± std over test)",
        title=f"{name}: HCT = {results['hct'][0]:.3g} ± {results['hct'][1]:.2g}"))
    rows = metrics_lib.read_metrics(workdir)
    if rows:
        paths.append(plotting.loss_curve(
            os.path.join(plots, "train_loss.png"), [r["step"] for r in rows],
            [r["loss"] for r in rows], ylabel="window MSE", title=f"{name}: training"))
    return paths
