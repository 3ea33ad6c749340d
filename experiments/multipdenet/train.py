"""MultiPDENet and its baselines on coarse trajectories: train, evaluate, plot.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests and
notebooks); `main.py` only parses flags. Data flow:

    config -> validate -> dataset (generated under data_root if not cached; lib/pde)
      -> emulator (MultiPDENet | FNO | UNet | classical solver on the coarse grid)
      -> lib.common.train_loop (BPTT over windows of `train.window` macro steps)
      -> rollouts of the test trajectories -> RMSE, MAE, MNAD, HCT, correlation(t)
      -> workdir: results.json, plots/*.png
"""
from __future__ import annotations

import os
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from absl import logging

from experiments.multipdenet import config_schema
from lib.common import config as config_lib, mesh as mesh_lib, metrics as metrics_lib
from lib.common import plotting, train_loop, workdir as wd
from lib.multipdenet import data as data_lib, emulators, metrics as mpn_metrics
from lib.multipdenet import model as mpn_model
from lib.nn import FNO, UNet
from lib.pde import navier_stokes

validate = config_schema.validate

# Keys added after workdirs existed, with the value that reproduces the behaviour before
# them: `wd.prepare` accepts a stored config.json without them, `_run_config` fills them in.
ADDED_KEYS = {"model.corrector_every": "stage"}


# ----------------------------------------------------------------------------- models


def _net_spec(kind: str, m) -> dict | None:
    if kind == "none":
        return None
    if kind == "fno":
        return {"arch": "fno", "modes": m.fno_modes, "width": m.fno_width, "depth": m.fno_depth,
                "projection_width": m.fno_projection}
    return {"arch": "unet", "features": tuple(m.unet_features)}


def build_emulator(config, metadata: dict) -> emulators.Emulator:
    """The emulator that `config.model.name` names, for the dataset described by `metadata`."""
    m, b, pde = config.model, config.baseline, metadata["pde"]
    channels, ndim = len(metadata["fields"]), 1 if pde == "kdv" else 2
    if m.name == "multipdenet":
        model = mpn_model.make_model(
            pde, h=metadata["length"] / metadata["coarse_grid"], macro_dt=metadata["frame_dt"],
            n_micro=m.n_micro, integrator=m.integrator,
            coefficients=emulators.physics_coefficients(pde, metadata["params"]),
            filter_mode=m.filter_mode, filter_layout=m.filter_layout,
            corrector=_net_spec(m.corrector, m), micro_net=_net_spec(m.micro_net, m),
            macro_net=_net_spec(m.macro_net, m), corrector_every=m.corrector_every)
        return emulators.multipdenet(model)
    if m.name == "fno":
        return emulators.autoregressive(FNO(
            out_channels=channels, modes=b.fno_modes, width=b.fno_width, depth=b.fno_depth,
            projection_width=b.fno_projection, spatial_dims=ndim))
    if m.name == "unet":
        return emulators.autoregressive(UNet(out_channels=channels, features=tuple(b.unet_features)))
    return emulators.coarse_solver(metadata, b.solver_steps_per_frame or None)


# ----------------------------------------------------------------------------- training


def make_schedule(config) -> optax.Schedule:
    """Linear warm-up from 0, then cosine decay to `lr · end_lr_factor` at num_steps."""
    o, steps = config.optim, config.train.num_steps
    warmup = min(o.warmup_steps, steps - 1)
    return optax.warmup_cosine_decay_schedule(0.0, o.lr, warmup, steps,
                                              end_value=o.lr * o.end_lr_factor)


def make_optimizer(config) -> optax.GradientTransformation:
    """AdamW on `make_schedule` with global-norm clipping."""
    o = config.optim
    return optax.chain(optax.clip_by_global_norm(o.grad_clip),
                       optax.adamw(make_schedule(config), weight_decay=o.weight_decay))


def window_loss(emulator: emulators.Emulator, params: Any, batch: dict, window: int) -> jax.Array:
    """MSE between the rollout of `window` macro steps from `u0` and the labels (BPTT)."""
    pred = emulator.rollout(params, batch["u0"], window)  # (window, B, *grid, C)
    return jnp.mean((jnp.swapaxes(pred, 0, 1) - batch["target"]) ** 2)


def make_task(config, emulator: emulators.Emulator, train_data: np.ndarray) -> train_loop.Task:
    opt = make_optimizer(config)
    window, bs, seed = config.train.window, config.train.batch_size, config.train.seed
    example = jnp.asarray(train_data[:1, 0])

    def init_state(key):
        params = emulator.init(key, example)
        return {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}

    def train_step(state, batch, key):
        del key  # the models are deterministic
        loss, grads = jax.value_and_grad(window_loss, argnums=1)(emulator, state["params"], batch,
                                                                  window)
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss, "grad_norm": optax.tree.norm(grads)})

    def batch_fn(step, rows):
        batch = data_lib.window_batch(train_data, step, seed, bs, window)
        return {k: v[rows] for k, v in batch.items()}

    return train_loop.Task(init_state, train_step, batch_fn, bs,
                           learning_rate=make_schedule(config))


# ----------------------------------------------------------------------------- evaluation


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


# ----------------------------------------------------------------------------- plots


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


# ----------------------------------------------------------------------------- trained runs


class Run(NamedTuple):
    """A finished run, ready for rollouts: see `load_run`."""

    config: Any
    data: dict
    emulator: emulators.Emulator
    params: Any
    step: int


def _run_config(workdir: str):
    if not os.path.isfile(os.path.join(workdir, wd.CONFIG)):
        raise ValueError(f"{workdir!r} has no {wd.CONFIG}: it is not a run folder")
    config = config_lib.load_config_json(os.path.join(workdir, wd.CONFIG))
    with config.unlocked():
        for key, value in ADDED_KEYS.items():  # a run recorded before the key existed
            *parents, leaf = key.split(".")
            block = config
            for name in parents:
                block = block[name]
            if leaf not in block:
                block[leaf] = value
    return config


def load_run(workdir: str, data_root: str | None = None) -> Run:
    """Config (the run's config.json), dataset, emulator and trained parameters of `workdir`.

    For notebooks, benchmarks and transfer studies; `data_root` overrides where the dataset
    is looked up (it is regenerated there if missing). ValueError if `workdir` is not a run.
    """
    config = _run_config(workdir)
    if data_root:
        config = config_lib.apply_overrides(config, {"data_root": data_root})
    validate(config)
    data = data_lib.load_or_generate(config.dataset, config.data_root)
    emulator = build_emulator(config, data["metadata"])
    if not emulator.trainable:
        return Run(config, data, emulator, {}, 0)
    state, step = train_loop.restore_trained(make_task(config, emulator, data["train"]), workdir,
                                             config.train.seed)
    return Run(config, data, emulator, state["params"], step)


# ----------------------------------------------------------------------------- transfer


def evaluate_transfer(workdir: str, dataset_overrides: dict, name: str,
                      data_root: str | None = None) -> dict:
    """Evaluate the model trained in `workdir` on a dataset with other settings.

    `dataset_overrides` change `config.dataset` (e.g. {"params.viscosity": 5e-4} for
    Re = 2000); the Physics Block is built with the new coefficients (it *knows* the PDE),
    the networks keep their trained weights. Writes `<workdir>/transfer/<name>.json`.
    """
    config = _run_config(workdir)
    config = config_lib.apply_overrides(
        config, {f"dataset.{k}": v for k, v in dataset_overrides.items()}
        | ({"data_root": data_root} if data_root else {}))
    validate(config)
    data = data_lib.load_or_generate(config.dataset, config.data_root)
    emulator = build_emulator(config, data["metadata"])
    params = {}
    if emulator.trainable:  # parameter shapes do not depend on the grid or the data
        task = make_task(config, emulator, data["train"])
        state, _ = train_loop.restore_trained(task, workdir, config.train.seed)
        params = state["params"]
    results, _ = evaluate(config, emulator, params, data["test"], data["metadata"])
    results.update(name=name, overrides=dataset_overrides, model=config.model.name,
                   dataset=data["path"], frame_dt=data["metadata"]["frame_dt"])
    wd.write_json_atomic(os.path.join(workdir, "transfer", f"{name}.json"), results)
    return results


# ----------------------------------------------------------------------------- entry point


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the experiment in `workdir`; returns the results dict (`guards.Preempted` on
    SIGTERM: nothing is written, the same command resumes)."""
    validate(config)
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary, added=ADDED_KEYS)

    data = data_lib.load_or_generate(
        config.dataset, config.data_root,
        mesh=mesh_lib.make_mesh() if jax.device_count() > 1 else None)
    metadata = data["metadata"]
    logging.info("dataset %s (%s): train %s, test %s", data["path"],
                 "cached" if data["cached"] else "generated", data["train"].shape, data["test"].shape)

    emulator = build_emulator(config, metadata)
    t0 = time.perf_counter()
    if emulator.trainable:
        task = make_task(config, emulator, data["train"])
        result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                                  workdir=workdir, mesh=mesh)
        params = result.state["params"]
        resumed_from = result.resumed_from
    else:
        params, resumed_from = {}, 0
    train_s = time.perf_counter() - t0

    results, pred = evaluate(config, emulator, params, data["test"], metadata)
    results.update(
        tag=config.tag, model=config.model.name, pde=metadata["pde"], dataset=data["path"],
        frame_dt=metadata["frame_dt"], coarse_grid=metadata["coarse_grid"],
        fine_grid=metadata["fine_grid"], n_train=metadata["n_train"], n_test=metadata["n_test"],
        train_steps=config.train.num_steps if emulator.trainable else 0,
        train_wall_s=train_s, resumed_from=resumed_from,
        n_params=emulators.count_params(params), device=jax.devices()[0].device_kind,
        n_devices=jax.device_count())
    if primary:
        if config.eval.plots:
            results["plots"] = write_plots(workdir, config, metadata, data["test"], pred, results)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    logging.info("%s: RMSE %.4g, MAE %.4g, MNAD %.4g, HCT %.4g ± %.3g (horizon %.4g)", config.tag,
                 results["rmse"][0], results["mae"][0], results["mnad"][0], results["hct"][0],
                 results["hct"][1], results["horizon"])
    return results
