"""Train/test trajectory datasets: generation, atomic writing, caching and checked loading.

A dataset is a directory `<root>/<pde>_<cache key>/` holding

    metadata.json   what was simulated (see `dataset_metadata`); written last
    train.npz       `data`: (n_train, n_frames + 1, C, m[, m]) coarse fields; `times`: (n_frames + 1,)
    test.npz        the same for the test trajectories

The cache key is a hash of the metadata, so an identical request finds its directory and
is not recomputed. The directory is built under a temporary name and renamed into place
only when every file is written: a crash or a blow-up never leaves a directory that looks
finished. `load_dataset` refuses a dataset whose metadata differs from what the caller
expects and names the differing field.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from typing import Any, Callable, Mapping

import jax
import numpy as np
from jax.sharding import Mesh

from lib.pde import checks, downsampling, systems, trajectory

FORMAT_VERSION = 1
METADATA = "metadata.json"
SPLITS = ("train", "test")


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """What to simulate (the fields of `config.data` plus the system and its parameters).

    warmup_time: simulated time discarded before the first saved frame.
    duration: simulated time covered by the saved frames.
    save_every: temporal downsampling, solver steps per saved frame.
    space_factor: spatial downsampling factor, fine grid n -> coarse grid n / space_factor.
    downsample: "spectral" (Fourier truncation) or "cell_average".
    seed: trajectory i of split s starts from `fold_in(fold_in(key(seed), s), i)`.
    chunk_frames: frames per compiled chunk (progress and blow-up checks run between
      chunks); it does not change the data and is not part of the metadata.
    """

    pde: str
    params: Mapping[str, Any]
    warmup_time: float
    duration: float
    save_every: int
    space_factor: int
    downsample: str
    n_train: int
    n_test: int
    seed: int
    dtype: str = "float32"
    chunk_frames: int = 50


def dataset_metadata(spec: DatasetSpec) -> dict[str, Any]:
    """The metadata of `spec`'s dataset; validates everything (ValueError) without computing."""
    solver = systems.build(spec.pde, spec.params, spec.dtype)
    n = spec.params["n"]
    checks.check_divisible(n, spec.space_factor)
    if spec.downsample not in downsampling.DOWNSAMPLERS:
        raise ValueError(
            f"unknown downsampling method {spec.downsample!r}; allowed: {sorted(downsampling.DOWNSAMPLERS)}"
        )
    checks.check_positive("save_every", spec.save_every)
    checks.check_positive("chunk_frames", spec.chunk_frames)
    checks.check_nonnegative("warmup_time", spec.warmup_time)
    for name in ("n_train", "n_test"):
        checks.check_positive(name, getattr(spec, name))
    frame_dt = solver.dt * spec.save_every
    n_frames = int(round(spec.duration / frame_dt))
    if n_frames < 1:
        raise ValueError(
            f"duration = {spec.duration:g} is shorter than one saved frame interval {frame_dt:g}"
        )
    return {
        "format_version": FORMAT_VERSION,
        "pde": spec.pde,
        "params": dict(spec.params),
        "dtype": spec.dtype,
        "dt": solver.dt,
        "length": solver.length,
        "fields": list(solver.saved_fields),
        "fine_grid": n,
        "coarse_grid": n // spec.space_factor,
        "space_factor": spec.space_factor,
        "downsample": spec.downsample,
        "save_every": spec.save_every,
        "frame_dt": frame_dt,
        "warmup_steps": int(round(spec.warmup_time / solver.dt)),
        "n_frames": n_frames + 1,
        "n_train": spec.n_train,
        "n_test": spec.n_test,
        "seed": spec.seed,
    }


def cache_key(metadata: Mapping[str, Any]) -> str:
    """A 16-hex-digit hash of the metadata (canonical JSON)."""
    text = json.dumps(metadata, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def dataset_path(root: str, metadata: Mapping[str, Any]) -> str:
    """Where the dataset with this metadata lives under `root`."""
    return os.path.join(root, f"{metadata['pde']}_{cache_key(metadata)}")


def initial_keys(seed: int, split: str, count: int) -> jax.Array:
    """The PRNG keys of the `count` trajectories of `split`."""
    base = jax.random.fold_in(jax.random.key(seed), SPLITS.index(split))
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(np.arange(count))


def simulate_coarse(
    solver: systems.Solver,
    keys: jax.Array,
    metadata: Mapping[str, Any],
    chunk_frames: int = 50,
    mesh: Mesh | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Simulate one trajectory per key and return the downsampled frames.

    Runs `warmup_steps`, then `n_frames − 1` intervals of `save_every` steps, in compiled
    chunks; after each chunk a non-finite state raises `trajectory.BlowUpError` naming the
    sample, step and field. `progress(steps_done, total_steps)` is called after each chunk.

    Returns:
      float array `(len(keys), n_frames, C, m[, m])`, frame 0 being the state after warm-up.
    """
    factor, method, ndim = metadata["space_factor"], metadata["downsample"], solver.ndim
    save_every, warmup = metadata["save_every"], metadata["warmup_steps"]
    n_intervals = metadata["n_frames"] - 1

    def observe(state: jax.Array) -> jax.Array:
        return downsampling.downsample(solver.observe(state), factor, method, ndim)

    count = keys.shape[0]
    if mesh is not None:  # pad the batch to a multiple of the data axis; padding is dropped
        pad = -count % mesh.shape["data"]
        keys = jax.numpy.concatenate([keys, keys[:pad]]) if pad else keys
    states = jax.jit(jax.vmap(solver.initial_state))(keys)
    observe_batch = jax.jit(jax.vmap(observe))
    frames: list[np.ndarray] = []
    total, done = warmup + n_intervals * save_every, 0
    simulators: dict[tuple[int, int, bool], Callable] = {}

    def advance(n_steps: int, every: int, keep: bool) -> None:
        nonlocal states, done
        key = (n_steps, every, keep)
        if key not in simulators:
            simulators[key] = trajectory.make_batch_simulator(
                solver.step, n_steps, every, observe if keep else (lambda s: s[:0]), mesh  # s[:0]: no frames
            )
        run = simulators[key](states)
        trajectory.raise_on_blowup(run, solver.state_fields, step_offset=done, dt=solver.dt)
        states, done = run.final_state, done + n_steps
        if keep:
            frames.append(np.asarray(run.frames))
        if progress is not None:
            progress(done, total)

    chunk_steps = chunk_frames * save_every
    for start in range(0, warmup, chunk_steps):
        advance(min(chunk_steps, warmup - start), min(chunk_steps, warmup - start), keep=False)
    frames.append(np.asarray(observe_batch(states))[:, None])
    for start in range(0, n_intervals, chunk_frames):
        advance(min(chunk_frames, n_intervals - start) * save_every, save_every, keep=True)
    return np.concatenate(frames, axis=1)[:count]


def _write_split(directory: str, split: str, data: np.ndarray, metadata: Mapping[str, Any]) -> None:
    times = metadata["warmup_steps"] * metadata["dt"] + metadata["frame_dt"] * np.arange(data.shape[1])
    with open(os.path.join(directory, f"{split}.npz"), "wb") as f:
        np.savez(f, data=data, times=times)


def generate_dataset(
    spec: DatasetSpec,
    root: str,
    mesh: Mesh | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[str, bool]:
    """Write the dataset of `spec` under `root`, or find it there already.

    Returns `(path, cached)`: `cached` is True when an identical dataset existed and
    nothing was computed. Train and test trajectories are simulated as one batch;
    `progress(steps_done, total_steps)` reports advancement.
    On any error (including a blow-up) the temporary directory is removed.
    """
    metadata = dataset_metadata(spec)
    path = dataset_path(root, metadata)
    if os.path.exists(os.path.join(path, METADATA)):
        load_metadata(path, metadata)
        return path, True
    solver = systems.build(spec.pde, spec.params, spec.dtype)
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=root, prefix=f".{os.path.basename(path)}.tmp-")
    try:
        keys = jax.numpy.concatenate(
            [initial_keys(spec.seed, split, metadata[f"n_{split}"]) for split in SPLITS]
        )
        data = simulate_coarse(solver, keys, metadata, spec.chunk_frames, mesh, progress)
        _write_split(tmp, "train", data[: spec.n_train], metadata)
        _write_split(tmp, "test", data[spec.n_train:], metadata)
        with open(os.path.join(tmp, METADATA), "w") as f:
            json.dump(metadata, f, indent=2, sort_keys=True)
        os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path, False


def _first_difference(found: Any, expected: Any, prefix: str = "") -> str | None:
    if isinstance(found, Mapping) and isinstance(expected, Mapping):
        for key in sorted(set(found) | set(expected)):
            name = f"{prefix}{key}"
            if key not in found or key not in expected:
                return name
            diff = _first_difference(found[key], expected[key], name + ".")
            if diff is not None:
                return diff
        return None
    return None if found == expected else prefix.rstrip(".")


def load_metadata(path: str, expected: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of the finished dataset at `path`, checked against `expected`.

    Raises ValueError when `path` holds no finished dataset or when a field differs
    (the message names the first differing field and both values).
    """
    file = os.path.join(path, METADATA)
    if not os.path.isfile(file):
        raise ValueError(f"{path!r} is not a finished dataset (no {METADATA})")
    with open(file) as f:
        found = json.load(f)
    expected = json.loads(json.dumps(expected))  # tuples -> lists, as stored
    field = _first_difference(found, expected)
    if field is not None:
        get = lambda d: _lookup(d, field)
        raise ValueError(
            f"dataset at {path!r} does not match: metadata field '{field}' is {get(found)!r}, "
            f"expected {get(expected)!r}"
        )
    return found


def _lookup(metadata: Mapping[str, Any], field: str) -> Any:
    node: Any = metadata
    for part in field.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return "<missing>"
        node = node[part]
    return node


def load_dataset(path: str, expected_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Load a dataset written by `generate_dataset`, refusing one that does not match.

    Returns `{"metadata": dict, "train": {"data", "times"}, "test": {"data", "times"}}`
    with numpy arrays (`data`: `(n, n_frames, C, m[, m])`).
    """
    metadata = load_metadata(path, expected_metadata)
    out: dict[str, Any] = {"metadata": metadata}
    for split in SPLITS:
        with np.load(os.path.join(path, f"{split}.npz")) as f:
            out[split] = {"data": f["data"], "times": f["times"]}
    return out
