"""Shared builder of the MultiPDENet configs (one file per system imports it)."""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib


def build(dataset, *, tag: str, num_steps: int, window: int, batch_size: int, lr: float,
          fno_modes: int = 12, fno_width: int = 12, fno_depth: int = 2,
          fno_projection: int = 50, unet_features=(16, 32, 64), baseline_fno_modes: int = 12,
          baseline_fno_width: int = 32, baseline_fno_depth: int = 4,
          baseline_unet_features=(32, 64, 128), n_micro: int = 4, eval_steps: int = -1,
          eval_batch: int = 10, log_every: int = 10, checkpoint_every: int = 100,
          data_root: str = "data/pde", warmup_steps: int = 20) -> ml_collections.ConfigDict:
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.dataset = dataset
    c.data_root = data_root
    c.model = dict(
        name="multipdenet", n_micro=n_micro, integrator="rk4", filter_mode="symmetric",
        filter_layout="sum_rules", corrector="fno", micro_net="fno", macro_net="fno",
        corrector_every="stage",
        fno_modes=fno_modes, fno_width=fno_width, fno_depth=fno_depth,
        fno_projection=fno_projection, unet_features=tuple(unet_features))
    c.baseline = dict(
        fno_modes=baseline_fno_modes, fno_width=baseline_fno_width, fno_depth=baseline_fno_depth,
        fno_projection=64, unet_features=tuple(baseline_unet_features), solver_steps_per_frame=0)
    c.optim = dict(lr=lr, end_lr_factor=0.05, warmup_steps=warmup_steps, weight_decay=0.0,
                   grad_clip=1.0)
    c.train = config_lib.train_block(num_steps, log_every=log_every,
                                     checkpoint_every=checkpoint_every)
    c.train.window = window
    c.train.batch_size = batch_size
    c.eval = dict(n_steps=eval_steps, hct_threshold=0.8, batch_size=eval_batch, n_snapshots=5,
                  plots=True)
    c.mesh = config_lib.mesh_block()
    return c


def tiny(dataset, tag: str) -> ml_collections.ConfigDict:
    """The `tiny` variant every system shares: seconds, for tests (8-row batches so they
    split over the 8 fake test devices)."""
    return build(dataset, tag=tag, num_steps=4, window=2, batch_size=8, lr=1e-3, fno_modes=4,
                 fno_width=4, baseline_fno_modes=4, baseline_fno_width=8, baseline_fno_depth=2,
                 unet_features=(4, 8), baseline_unet_features=(4, 8), log_every=2,
                 checkpoint_every=2, eval_batch=2)


def coarser(dataset, space_factor: int) -> ml_collections.ConfigDict:
    """`dataset` (a configs/pde_data config) saved on a coarser grid."""
    dataset.data.space_factor = space_factor
    return dataset
