"""What the MultiPDENet configs share: the `tiny` variant and `coarser` datasets. Defaults
and rules of every key are in lib/multipdenet/config_schema.py (`KEYS`)."""
from __future__ import annotations

import ml_collections

from lib.multipdenet.config_schema import config

# Seconds, for tests (8-row batches so they split over the 8 fake test devices).
TINY = {"mesh.data": 1, "train.num_steps": 4, "train.window": 2, "train.batch_size": 8, "optim.lr": 1e-3,
        "model.fno_modes": 4, "model.fno_width": 4, "baseline.fno_modes": 4,
        "baseline.fno_width": 8, "baseline.fno_depth": 2, "model.unet_features": (4, 8),
        "baseline.unet_features": (4, 8), "train.log_every": 2, "train.checkpoint_every": 2,
        "eval.batch_size": 2}


def tiny(dataset, tag: str) -> ml_collections.ConfigDict:
    """The `tiny` variant every system shares."""
    return config(dataset, TINY | {"tag": tag})


def coarser(dataset, space_factor: int) -> ml_collections.ConfigDict:
    """`dataset` (a configs/pde_data config) saved on a coarser grid."""
    dataset.data.space_factor = space_factor
    return dataset
