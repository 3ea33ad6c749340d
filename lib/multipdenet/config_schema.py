"""What a MultiPDENet experiment config may hold, and the checks run before any compute.

Blocks: `dataset` (a `configs/pde_data` config: pde, params, data), `data_root`, `model`,
`baseline`, `optim`, `train` (shared block + window, batch_size), `eval`, `mesh`, `tag`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Ints, Str
from lib.pde import data_config, dataset as dataset_lib

MODELS = ("multipdenet", "fno", "unet", "coarse_solver")
NETS = ("fno", "unet", "none")

_MODEL = {
    "model.name": Choice(MODELS),
    "model.n_micro": Int(lo=1, hi=64),
    "model.integrator": Choice(("rk4", "euler")),
    "model.filter_mode": Choice(("symmetric", "free", "frozen")),
    "model.filter_layout": Choice(("sum_rules", "p2c2net")),
    "model.corrector_every": Choice(("stage", "micro", "macro")),
    "model.corrector": Choice(NETS),
    "model.micro_net": Choice(NETS),
    "model.macro_net": Choice(NETS),
    "model.fno_modes": Int(lo=1),
    "model.fno_width": Int(lo=1),
    "model.fno_depth": Int(lo=1),
    "model.fno_projection": Int(lo=1),
    "model.unet_features": Ints(lo=1),
    "baseline.fno_modes": Int(lo=1),
    "baseline.fno_width": Int(lo=1),
    "baseline.fno_depth": Int(lo=1),
    "baseline.fno_projection": Int(lo=1),
    "baseline.unet_features": Ints(lo=1),
    "baseline.solver_steps_per_frame": Int(lo=0),
}
_OTHER = {
    "tag": Str(allow_empty=False),
    "data_root": Str(allow_empty=False),
    "optim.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.end_lr_factor": Float(lo=0.0, hi=1.0),
    "optim.warmup_steps": Int(lo=0),
    "optim.weight_decay": Float(lo=0.0),
    "optim.grad_clip": Float(lo=0.0, lo_open=True),
    "train.window": Int(lo=1),
    "train.batch_size": Int(lo=1),
    "eval.n_steps": Int(lo=-1),
    "eval.hct_threshold": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "eval.batch_size": Int(lo=1),
    "eval.n_snapshots": Int(lo=1, hi=12),
    "eval.plots": Bool(),
}


def schema(pde: str) -> dict[str, config_lib.Rule]:
    rules = {f"dataset.{k}": v for k, v in data_config.schema(pde).items()}
    return rules | _MODEL | _OTHER | config_lib.TRAIN_SCHEMA | config_lib.MESH_SCHEMA


def _check_physics(config: ml_collections.ConfigDict) -> None:
    """Cross-field checks: the dataset request, the window, grids the networks can cover."""
    spec = data_config.spec_from_config(config.dataset)  # CFL, divisibility, ...
    meta = dataset_lib.dataset_metadata(spec)
    n_frames, coarse = meta["n_frames"], meta["coarse_grid"]
    if config.train.window >= n_frames:
        raise ConfigError(
            f"config key 'train.window' = {config.train.window} is not allowed; the trajectories "
            f"have {n_frames} frames, so the window must be <= {n_frames - 1}")
    if config.eval.n_steps >= n_frames:
        raise ConfigError(
            f"config key 'eval.n_steps' = {config.eval.n_steps} is not allowed; the test "
            f"trajectories have {n_frames} frames, so at most {n_frames - 1} steps (or -1 for all)")
    if coarse < 5:
        raise ConfigError(f"the coarse grid ({coarse} points) is smaller than the 5-point stencil filters")
    m = config.model
    uses = {"fno": [], "unet": []}
    if m.name == "multipdenet":
        for net in ("corrector", "micro_net", "macro_net"):
            if m[net] in uses:
                uses[m[net]].append((f"model.{net}", m.fno_modes, m.unet_features))
    elif m.name in ("fno", "unet"):
        uses[m.name].append((f"model.name='{m.name}'", config.baseline.fno_modes,
                             config.baseline.unet_features))
    for where, modes, _ in uses["fno"]:
        if coarse < 2 * modes:
            raise ConfigError(f"{where} uses an FNO with {modes} modes, which needs a grid of at "
                              f"least {2 * modes} points; the coarse grid has {coarse}")
    for where, _, features in uses["unet"]:
        if spec.pde == "kdv":
            raise ConfigError(f"{where} = 'unet' needs a 2-D system; kdv is 1-D (use 'fno')")
        levels = len(features) - 1
        if coarse % 2**levels:
            raise ConfigError(f"{where} uses a UNet with {levels} poolings, which needs a grid "
                              f"divisible by {2 ** levels}; the coarse grid has {coarse}")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """Schema + cross-field checks; a `ConfigError` names the key, the value, what is allowed."""
    if "dataset" not in config or "pde" not in config.dataset:
        raise ConfigError("config has no 'dataset.pde' (a configs/pde_data config)")
    return config_lib.validate(config, schema(config.dataset.pde), [_check_physics])
