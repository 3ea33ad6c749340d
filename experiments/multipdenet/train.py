"""MultiPDENet and its baselines on coarse trajectories: train, evaluate, plot.

`train_and_evaluate(config, workdir)` is the whole experiment (importable from tests and
notebooks); `main.py` only parses flags. Data flow:

    config -> runs.setup: validate, prepare the workdir, dataset (generated under
      data_root if not cached; lib/pde), emulator (MultiPDENet | FNO | UNet | classical
      solver on the coarse grid)
      -> lib.common.train_loop (BPTT over windows of `train.window` macro steps; a
         validation rollout error every `train.checkpoint_every` steps)
      -> rollouts of the test trajectories -> RMSE, MAE, MNAD, HCT, correlation(t), for the
         model and, beside a learned model, the classical solver on the same coarse grid
      -> workdir: results.json, plots/*.png; the last line printed names them and the
         headline numbers

The pieces live in lib/multipdenet: `config_schema` (keys, defaults, rules), `training`
(emulator, optimiser, task), `evaluation` (rollouts, scores, plots), `runs` (`setup`,
`load_run`).
"""
from __future__ import annotations

import os
import time

import jax
from absl import logging

from lib.common import mesh as mesh_lib, train_loop, workdir as wd
from lib.multipdenet import emulators
from lib.multipdenet.evaluation import (evaluate, evaluate_classical, headline, validation,
                                        write_plots)
from lib.multipdenet.runs import setup
from lib.multipdenet.training import make_task


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the experiment in `workdir`; returns the results dict, whose "baselines" holds
    the classical solver's scores when the model is learned (`guards.Preempted` on SIGTERM:
    nothing is written, the same command resumes)."""
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    run = setup(config, workdir, data_mesh=mesh if mesh.size > 1 else None)
    data, metadata, emulator, primary = run.data, run.metadata, run.emulator, mesh_lib.is_primary()
    logging.info("dataset %s (%s): train %s, test %s", data["path"],
                 "cached" if data["cached"] else "generated", data["train"].shape, data["test"].shape)

    t0 = time.perf_counter()
    if emulator.trainable:
        task = make_task(config, emulator, data["train"])
        result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                                  workdir=workdir, mesh=run.mesh,
                                  validation=validation(config, emulator, data["train"]))
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
    if config.model.name != "coarse_solver":
        classical, _ = evaluate_classical(config, data["test"], metadata)
        results["baselines"] = {"coarse_solver": classical}
    if primary:
        if config.eval.plots:
            results["plots"] = write_plots(workdir, config, metadata, data["test"], pred, results)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    logging.info("%s: RMSE %.4g, MAE %.4g, MNAD %.4g, HCT %.4g ± %.3g (horizon %.4g)", config.tag,
                 results["rmse"][0], results["mae"][0], results["mnad"][0], results["hct"][0],
                 results["hct"][1], results["horizon"])
    if primary:
        print(headline(results, workdir, plots=config.eval.plots), flush=True)
    return results
