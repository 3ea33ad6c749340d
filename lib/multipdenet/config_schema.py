"""MultiPDENet's config: every key's default together with its rule, and the checks run
before any compute.

`KEYS` maps each dotted key to `Key(default, rule[, before])`; `config(dataset, overrides)`
builds a config from those defaults (a `configs/multipdenet/*.py` file states only what
differs), and `validate` checks a config against the same rules plus the cross-field
checks. `before` is the value that reproduces a run recorded before the key existed
(`ADDED_KEYS`, given to `wd.prepare` and to `runs.run_config`); `was` is a key's old name
(`RENAMED_KEYS`, likewise: stored configs with the old name keep resuming and loading).
`dataset` is a `configs/pde_data` config; its rules are `lib.pde.data_config.schema`.
"""
from __future__ import annotations

from typing import Any

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Ints, Key, Optional, Str
from lib.pde import data_config

MODELS = ("multipdenet", "fno", "unet", "coarse_solver")
NETS = ("fno", "unet", "none")
KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "data_root": Key("data/pde", Str(allow_empty=False)),
    "model.name": Key("multipdenet", Choice(MODELS)),
    "model.n_micro": Key(4, Int(lo=1, hi=64)),
    # ΔT = frame_stride saved frames of the data (train and test read every frame_stride-th
    # frame; `data.strided`), so a macro step, and its corrector calls, spans them all.
    "model.frame_stride": Key(1, Int(lo=1), before=1),
    "model.integrator": Key("rk4", Choice(("rk4", "euler"))),
    "model.filter_mode": Key("symmetric", Choice(("symmetric", "free", "frozen"))),
    "model.filter_layout": Key("sum_rules", Choice(("sum_rules", "p2c2net", "fd4_taps"))),
    # The `fd4_taps` stencil parameters at initialisation, (φ, θ): ∂x FD4's + φ·[1, −2, 0, 2, −1],
    # ∂xx FD4's + θ·[1, −4, 6, −4, 1] (`classical.stencil_params`); None: FD4 (φ = θ = 0).
    "model.stencil_init": Key(None, Optional(Floats()), before=None),
    "model.corrector_every": Key("stage", Choice(("stage", "micro", "macro")), before="stage"),
    "model.corrector": Key("fno", Choice(NETS)),
    "model.micro_net": Key("fno", Choice(NETS)),
    "model.macro_net": Key("fno", Choice(NETS)),
    "model.fno_modes": Key(12, Int(lo=1)),
    "model.fno_width": Key(12, Int(lo=1)),
    "model.fno_depth": Key(2, Int(lo=1)),
    "model.fno_projection": Key(50, Int(lo=1)),
    "model.unet_features": Key((16, 32, 64), Ints(lo=1)),
    "baseline.fno_modes": Key(12, Int(lo=1)),
    "baseline.fno_width": Key(32, Int(lo=1)),
    "baseline.fno_depth": Key(4, Int(lo=1)),
    "baseline.fno_projection": Key(64, Int(lo=1)),
    "baseline.unet_features": Key((32, 64, 128), Ints(lo=1)),
    "baseline.solver_steps_per_frame": Key(0, Int(lo=0)),
    "optim.lr": Key(REQUIRED, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.end_lr_factor": Key(0.05, Float(lo=0.0, hi=1.0)),
    "optim.warmup": Key(20, Int(lo=0), was="optim.warmup_steps"),
    "optim.weight_decay": Key(0.0, Float(lo=0.0)),
    "optim.clip": Key(1.0, Float(lo=0.0, lo_open=True), was="optim.grad_clip"),
    **config_lib.keys_of_block("train", config_lib.train_block(REQUIRED), config_lib.TRAIN_SCHEMA),
    "train.window": Key(REQUIRED, Int(lo=1)),
    # Curriculum over the BPTT window: equal phases of the run, one window each, ending at
    # `train.window` (e.g. (2, 4, 8)); empty: `train.window` throughout.
    "train.window_curriculum": Key((), Ints(lo=1), before=()),
    "train.batch_size": Key(REQUIRED, Int(lo=1)),
    # Levers for long rollouts beyond the paper (lib/multipdenet/training.py): pushforward
    # steps without gradient before the window, input noise as a fraction of its RMS, the
    # weight of a (1 − correlation) term, recomputation per macro step.
    "train.pushforward": Key(0, Int(lo=0), before=0),
    "train.noise_std": Key(0.0, Float(lo=0.0), before=0.0),
    "train.corr_weight": Key(0.0, Float(lo=0.0), before=0.0),
    "train.remat": Key(False, Bool(), before=False),
    # Keep the stencil parameters at their initial values (only the networks train).
    "train.freeze_stencils": Key(False, Bool(), before=False),
    "eval.n_steps": Key(-1, Int(lo=-1)),
    "eval.hct_threshold": Key(0.8, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "eval.batch_size": Key(10, Int(lo=1)),
    "eval.n_snapshots": Key(5, Int(lo=1, hi=12)),
    "eval.plots": Key(True, Bool()),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}
ADDED_KEYS = config_lib.added_of(KEYS)
RENAMED_KEYS = config_lib.renamed_of(KEYS)


def config(dataset: ml_collections.ConfigDict, overrides: dict[str, Any]) -> ml_collections.ConfigDict:
    """The defaults of `KEYS` with `overrides` (flat dotted keys) and `dataset` in place.

    ConfigError for an unknown key or a required key (`tag`, `optim.lr`, `train.num_steps`,
    `train.window`, `train.batch_size`) left unstated.
    """
    return config_lib.from_keys(KEYS, overrides, where="lib/multipdenet/config_schema.py",
                               extra={"dataset": dataset})


def schema(pde: str) -> dict[str, config_lib.Rule]:
    rules = {f"dataset.{k}": v for k, v in data_config.schema(pde).items()}
    return rules | config_lib.rules_of(KEYS)


def _check_physics(config: ml_collections.ConfigDict) -> None:
    """Cross-field checks: the dataset request, the window, grids the networks can cover."""
    from lib.multipdenet import data as data_lib   # JAX, loaded only when a config is checked

    spec, meta = data_config.spec_and_metadata(config.dataset)  # CFL, divisibility, ...
    stride = config.model.frame_stride
    n_frames, coarse = data_lib.strided(meta, stride)["n_frames"], meta["coarse_grid"]
    read = f" when read every {stride} of {meta['n_frames']} (model.frame_stride)" if stride > 1 else ""
    if n_frames < 2:
        raise ConfigError(f"config key 'model.frame_stride' = {stride} is not allowed; the "
                          f"trajectories have {meta['n_frames']} frames, so it must be <= "
                          f"{meta['n_frames'] - 1}")
    if config.train.window >= n_frames:
        raise ConfigError(
            f"config key 'train.window' = {config.train.window} is not allowed; the trajectories "
            f"have {n_frames} frames{read}, so the window must be <= {n_frames - 1}")
    if config.train.window + config.train.pushforward >= n_frames:
        raise ConfigError(
            f"config key 'train.pushforward' = {config.train.pushforward} is not allowed; with "
            f"train.window = {config.train.window} the trajectories ({n_frames} frames{read}) "
            f"allow at most {n_frames - 1 - config.train.window}")
    curriculum = tuple(config.train.window_curriculum)
    if curriculum and (max(curriculum) != config.train.window or list(curriculum) != sorted(curriculum)):
        raise ConfigError(
            f"config key 'train.window_curriculum' = {curriculum} is not allowed; it must be "
            f"non-decreasing and end at train.window = {config.train.window}")
    if config.eval.n_steps >= n_frames:
        raise ConfigError(
            f"config key 'eval.n_steps' = {config.eval.n_steps} is not allowed; the test "
            f"trajectories have {n_frames} frames{read}, so at most {n_frames - 1} steps (or -1 for all)")
    if coarse < 5:
        raise ConfigError(f"the coarse grid ({coarse} points) is smaller than the 5-point stencil filters")
    m = config.model
    if m.stencil_init is not None and (len(m.stencil_init) != 2 or m.filter_layout != "fd4_taps"
                           or m.filter_mode != "symmetric" or spec.pde == "kdv"):
        raise ConfigError(f"config key 'model.stencil_init' = {tuple(m.stencil_init)} is not allowed; "
                          "it is (φ, θ) of the 2-D 'fd4_taps' stencils (model.filter_layout='fd4_taps', "
                          "model.filter_mode='symmetric')")
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
