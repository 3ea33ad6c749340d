"""Coarse trajectories for learning: dataset access, channels-last layout, training windows.

The solvers and datasets of `lib/pde` store fields channels-first, `(n, T, C, *grid)`;
the learned models work channels-last, `(n, T, *grid, C)`. This module is the one place
that converts. Training samples are windows (notes §1.5): the first frame is the input,
the next `window` frames are the labels. A model may step over several saved frames
(`model.frame_stride`): `strided` is the dataset as that model sees it.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from lib.common import paths
from lib.common.progress import Progress
from lib.pde import dataset as dataset_lib
from lib.pde.data_config import spec_from_config


def channels_last(data: np.ndarray) -> np.ndarray:
    """`(n, T, C, *grid)` -> `(n, T, *grid, C)`."""
    return np.moveaxis(data, 2, -1)


def channels_first(data: np.ndarray) -> np.ndarray:
    """`(..., *grid, C)` with `grid_dims` spatial axes -> `(..., C, *grid)` (inverse of above)."""
    return np.moveaxis(data, -1, -1 - (data.ndim - 3))


def strided(metadata: dict, frame_stride: int) -> dict:
    """`metadata` of the dataset read every `frame_stride`-th saved frame: ΔT = frame_stride ·
    frame_dt, `n_frames` = ⌈n_frames / frame_stride⌉ (frame 0 kept), `save_every` (fine
    steps per ΔT) scaled alike; `frame_stride` recorded. Stride 1 returns `metadata` itself."""
    if frame_stride < 1:
        raise ValueError(f"frame_stride = {frame_stride} must be >= 1")
    if frame_stride == 1:
        return metadata
    return dict(metadata, frame_dt=metadata["frame_dt"] * frame_stride,
                n_frames=(metadata["n_frames"] - 1) // frame_stride + 1,
                save_every=metadata["save_every"] * frame_stride, frame_stride=frame_stride)


def load_or_generate(dataset_config, root: str, mesh=None, frame_stride: int = 1) -> dict[str, Any]:
    """The dataset that `dataset_config` (a `configs/pde_data` config, checked here:
    `spec_from_config`) describes, read every `frame_stride`-th frame (`strided`): see `load`."""
    return load(spec_from_config(dataset_config), root, mesh, frame_stride)


def spec_of(dataset_config) -> dataset_lib.DatasetSpec:
    """The `DatasetSpec` of a dataset config that is already checked (a MultiPDENet config's
    `dataset` after `config_schema.validate`); nothing is checked again."""
    return dataset_lib.DatasetSpec(pde=dataset_config.pde, params=dataset_config.params.to_dict(),
                                   **dataset_config.data.to_dict())


def load(spec: dataset_lib.DatasetSpec, root: str, mesh=None, frame_stride: int = 1) -> dict[str, Any]:
    """The dataset of `spec`, read every `frame_stride`-th frame (`strided`).

    Generated under `root` (a relative root is under the repository root; steps/s and ETA
    in the log) when no identical one is cached there (`lib.pde.dataset`). Returns `{"metadata", "path", "cached", "train",
    "test"}` with channels-last float arrays `(n, T, *grid, C)`.
    """
    root = paths.resolve(root)               # a relative root is under the repository root
    metadata = dataset_lib.dataset_metadata(spec)
    total = metadata["warmup_steps"] + (metadata["n_frames"] - 1) * metadata["save_every"]
    bar = Progress(total, desc=f"{spec.pde} dataset ({spec.n_train + spec.n_test} trajectories)")
    path, cached = dataset_lib.generate_dataset(
        spec, root, mesh, progress=lambda done, _: bar.update(done, force=done == total))
    loaded = dataset_lib.load_dataset(path, metadata)
    every = slice(None, None, frame_stride)
    return {
        "metadata": strided(loaded["metadata"], frame_stride),
        "path": path,
        "cached": cached,
        "train": channels_last(loaded["train"]["data"][:, every]),
        "test": channels_last(loaded["test"]["data"][:, every]),
    }


def check_window(n_frames: int, window: int) -> None:
    """ValueError unless a window of `window` labels (plus its input frame) fits."""
    if window < 1 or window >= n_frames:
        raise ValueError(
            f"training window = {window} must be >= 1 and shorter than the trajectories "
            f"({n_frames} frames: one input plus at most {n_frames - 1} labels)"
        )


def window_batch(trajectories: np.ndarray, step: int, seed: int, batch_size: int,
                 window: int) -> Mapping[str, np.ndarray]:
    """The training batch of `step`: a pure function of `(seed, step)`.

    Args:
      trajectories: `(n, T, *grid, C)`.
    Returns:
      {"u0": `(batch_size, *grid, C)`, "target": `(batch_size, window, *grid, C)`}, each
      window starting at a uniformly drawn trajectory and frame.
    """
    n, t = trajectories.shape[:2]
    check_window(t, window)
    rng = np.random.default_rng([seed, step])
    which = rng.integers(0, n, batch_size)
    start = rng.integers(0, t - window, batch_size)
    idx = start[:, None] + np.arange(window + 1)[None, :]
    frames = trajectories[which[:, None], idx]  # (B, window + 1, *grid, C)
    return {"u0": frames[:, 0], "target": frames[:, 1:]}
