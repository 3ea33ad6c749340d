"""MultiPDENet runs: `setup` (a config checked once, its dataset and emulator: where the
experiment, the tools and the benchmarks start) and, for finished runs, `load_run` (config,
dataset, emulator, trained parameters), `export_run` / `load_exported` (a run's weights as a
small folder that can be committed and loaded without its dataset) and `evaluate_transfer`
(a trained run on a dataset with other settings)."""
from __future__ import annotations

import os
import shutil
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from lib.common import checkpoint, config as config_lib, mesh as mesh_lib, train_loop
from lib.common import workdir as wd
from lib.multipdenet import data as data_lib, emulators
from lib.multipdenet.config_schema import ADDED_KEYS, RENAMED_KEYS, validate
from lib.multipdenet.evaluation import evaluate
from lib.multipdenet.training import build_emulator, make_task
from lib.pde import dataset as dataset_lib

PARAMS, REFERENCE = "params.npz", "reference.npz"


class Setup(NamedTuple):
    """What a MultiPDENet run starts from: see `setup`."""

    config: Any
    spec: dataset_lib.DatasetSpec
    metadata: dict
    data: dict | None
    emulator: emulators.Emulator
    mesh: Any


def setup(config, workdir: str | None = None, load_data: bool = True, data_mesh=None) -> Setup:
    """`config` checked once (`config_schema.validate`: a `ConfigError` naming the key), its
    dataset and the emulator it names.

    With `workdir` (a training run) the run's mesh (`config.mesh`, else `Setup.mesh` is
    None) is made and the workdir prepared (`wd.prepare`: it refuses another run's workdir)
    before any data is read. `load_data`: `Setup.data` is the dataset (`data.load`: made
    under `config.data_root` if not cached there, over `data_mesh` if given); False reads
    nothing and leaves it None. `metadata` is the dataset's as the model reads it (every
    `model.frame_stride`-th frame).
    """
    validate(config)
    mesh = None
    if workdir is not None:
        mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
        wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
                   added=ADDED_KEYS, renamed=RENAMED_KEYS)
    spec, stride = data_lib.spec_of(config.dataset), config.model.frame_stride
    if load_data:
        data = data_lib.load(spec, config.data_root, data_mesh, stride)
        metadata = data["metadata"]
    else:
        data, metadata = None, data_lib.strided(dataset_lib.dataset_metadata(spec), stride)
    return Setup(config, spec, metadata, data, build_emulator(config, metadata), mesh)


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
    config = config_lib.load_config_json(os.path.join(workdir, wd.CONFIG), RENAMED_KEYS)
    with config.unlocked():
        for key, value in ADDED_KEYS.items():  # a run recorded before the key existed
            *parents, leaf = key.split(".")
            block = config
            for name in parents:
                block = block[name]
            if leaf not in block:
                block[leaf] = value
    return config


def load_run(workdir: str, data_root: str | None = None, step: int | None = None) -> Run:
    """Config (the run's config.json), dataset, emulator and trained parameters of `workdir`
    (its newest checkpoint, or the kept `step`).

    For notebooks, benchmarks and transfer studies; `data_root` overrides where the dataset
    is looked up (it is regenerated there if missing). ValueError if `workdir` is not a run,
    or `step` is given for an exported run (it holds one state) or is not kept.
    """
    if os.path.isfile(os.path.join(workdir, PARAMS)):
        if step is not None:
            raise ValueError(f"{workdir!r} is an exported run: it holds one state, not step {step}")
        return load_exported(workdir)
    config = run_config(workdir)
    if data_root:
        config = config_lib.apply_overrides(config, {"data_root": data_root})
    s = setup(config)
    if not s.emulator.trainable:
        return Run(config, s.data, s.emulator, {}, 0)
    state, step = train_loop.restore_trained(make_task(config, s.emulator, s.data["train"]),
                                             workdir, config.train.seed, step=step)
    return Run(config, s.data, s.emulator, state["params"], step)


def export_run(workdir: str, out: str, n_frames: int = 10) -> str:
    """Write `out/`: the run's config.json and results.json, its trained parameters
    (`params.npz`) and a reference rollout (`reference.npz`: the first test IC `u0`, the
    model's next `n_frames` frames and the truth's) that `load_exported` users can check
    against. `out` must not exist (nothing is overwritten); the folder is built beside it
    and renamed into place, so it appears whole or not at all."""
    if os.path.exists(out):
        raise FileExistsError(f"{out} exists; export to a new folder (nothing is overwritten)")
    run = load_run(workdir)
    if not run.emulator.trainable:
        raise ValueError(f"{workdir}: model {run.config.model.name!r} has no trained parameters")
    if run.data["test"].shape[1] <= n_frames:
        raise ValueError(f"{workdir}: the test trajectories have {run.data['test'].shape[1]} "
                         f"frames; n_frames must be below that")
    u0, truth = np.asarray(run.data["test"][0, 0]), np.asarray(run.data["test"][0, 1:n_frames + 1])
    frames = np.asarray(jax.jit(run.emulator.rollout, static_argnums=2)(run.params, jnp.asarray(u0), n_frames))
    tmp = f"{out}.tmp_export"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        for name in (wd.CONFIG, wd.RESULTS):
            shutil.copy2(os.path.join(workdir, name), os.path.join(tmp, name))
        checkpoint.save_params(os.path.join(tmp, PARAMS), run.params)
        np.savez_compressed(os.path.join(tmp, REFERENCE), u0=u0, frames=frames, truth=truth,
                            step=run.step)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def load_exported(folder: str) -> Run:
    """A folder `export_run` wrote, as a `Run` whose `data` holds only the dataset's
    `metadata` (computed from the config, no dataset is generated) and the `reference`
    rollout {"u0", "frames", "truth", "step"}. CheckpointMismatch when the code's model differs."""
    s = setup(run_config(folder), load_data=False)
    with np.load(os.path.join(folder, REFERENCE)) as f:
        reference = {k: f[k] for k in f.files}
    like = jax.eval_shape(s.emulator.init, jax.random.key(0), jnp.asarray(reference["u0"])[None])
    params = checkpoint.load_params(os.path.join(folder, PARAMS), like)
    return Run(s.config, {"metadata": s.metadata, "reference": reference}, s.emulator, params,
               int(reference["step"]))


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
    s = setup(config)
    data, emulator = s.data, s.emulator
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
