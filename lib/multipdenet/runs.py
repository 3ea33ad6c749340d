"""Finished MultiPDENet runs, for tools, notebooks and benchmarks: `load_run` (config,
dataset, emulator, trained parameters) and `evaluate_transfer` (a trained run on a dataset
with other settings)."""
from __future__ import annotations

import os
from typing import Any, NamedTuple

from lib.common import config as config_lib, train_loop, workdir as wd
from lib.multipdenet import data as data_lib, emulators
from lib.multipdenet.config_schema import ADDED_KEYS, validate
from lib.multipdenet.evaluation import evaluate
from lib.multipdenet.training import build_emulator, make_task


class Run(NamedTuple):
    """A finished run, ready for rollouts: see `load_run`."""

    config: Any
    data: dict
    emulator: emulators.Emulator
    params: Any
    step: int


def run_config(workdir: str):
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
    config = run_config(workdir)
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


def evaluate_transfer(workdir: str, dataset_overrides: dict, name: str,
                      data_root: str | None = None) -> dict:
    """Evaluate the model trained in `workdir` on a dataset with other settings.

    `dataset_overrides` change `config.dataset` (e.g. {"params.viscosity": 5e-4} for
    Re = 2000); the Physics Block is built with the new coefficients (it *knows* the PDE),
    the networks keep their trained weights. Writes `<workdir>/transfer/<name>.json`.
    """
    config = run_config(workdir)
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
