"""GMFlow's config: every key's default with its rule (`KEYS`; a configs/gmflow file states
only what differs, through `config(overrides)`), and the checks run before any compute.

Blocks: `train`/`mesh` (shared harness; `train.num_steps` is the step count of every model),
`optim`, `toy` (2-D checkerboard / Gaussian grid: GMFlow K sweep vs flow matching over NFE),
`digits` (class-conditional 8×8 digits or Fashion-MNIST, MLP or UNet: probabilistic guidance
vs CFG, over one or several seeds),
`parts`, `tag`, `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Ints, Key, Names, Str)

PARTS = ("toy", "digits")
FM_SOLVERS = ("euler", "heun", "ddpm")
GM_SOLVERS = ("gm_sde", "gm_sde2", "gm_ode", "gm_ode2")
TOYS = ("checkerboard", "gaussian_grid", "moons")
SCHEDULES = ("constant", "cosine")
EMA_KINDS = ("exp", "karras")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"FM_SOLVERS": "lib.gmflow.samplers:FM_SOLVERS",
           "GM_SOLVERS": "lib.gmflow.samplers:GM_SOLVERS", "TOYS": "lib.gmflow.toys:TOYS",
           "SCHEDULES": "lib.common.optim:SCHEDULES", "EMA_KINDS": "lib.common.optim:EMA_KINDS"}


KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=100, checkpoint_every=500),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(("toy", "digits"), Names(PARTS)),
    "optim.lr": Key(0.001, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.warmup": Key(200, Int(lo=0), was="optim.warmup_steps"),
    # AdamW (no weight decay, β₁ 0.9) with global-norm clipping (0 = none): a linear warm-up
    # from lr·warmup_from over `warmup` steps, then lr held ("constant") or cosine-decayed to
    # lr·end_lr_factor; the EMA of the parameters (lib.common.optim.ema_update) is "exp" with
    # the constant decay ema_decay or "karras", β_t = (1 − 1/t)^(ema_gamma + 1)
    "optim.ema_decay": Key(0.995, Float(lo=0.0, hi=1.0, hi_open=True)),
    "optim.schedule": Key("cosine", Choice(SCHEDULES), before="cosine"),
    "optim.end_lr_factor": Key(0.1, Float(lo=0.0, hi=1.0), before=0.1),
    "optim.warmup_from": Key(0.0, Float(lo=0.0, hi=1.0), before=0.0),
    "optim.clip": Key(10.0, Float(lo=0.0), before=10.0),
    "optim.b2": Key(0.99, Float(lo=0.0, hi=1.0, hi_open=True), before=0.99),
    "optim.ema_kind": Key("exp", Choice(EMA_KINDS), before="exp"),
    "optim.ema_gamma": Key(7.0, Float(lo=0.0), before=7.0),
    "toy.datasets": Key(("checkerboard", "gaussian_grid"), Names(TOYS)),
    "toy.components": Key((1, 8, 64), Ints(lo=1)),
    "toy.grid_components": Key((8,), Ints(lo=1)),
    "toy.fm_baseline": Key(True, Bool()),
    "toy.loss": Key("gm_transition", Choice(("gm_transition", "gm_kl"))),
    "toy.trans_ratio": Key(0.9, Float(lo=0.0, lo_open=True, hi=1.0)),
    "toy.width": Key(256, Int(lo=1)),
    "toy.depth": Key(3, Int(lo=1)),
    "toy.coord_embed_dim": Key(64, Int(lo=0)),
    "toy.batch_size": Key(1024, Int(lo=1)),
    "toy.nfes": Key((1, 2, 4, 8, 16, 32), Ints(lo=1)),
    "toy.gm_solvers": Key(("gm_sde", "gm_sde2", "gm_ode", "gm_ode2"), Names(GM_SOLVERS)),
    "toy.fm_solvers": Key(("euler", "heun", "ddpm"), Names(FM_SOLVERS)),
    "toy.substep_budget": Key(128, Int(lo=1)),
    "toy.num_samples": Key(4000, Int(lo=10)),
    "toy.mmd_samples": Key(1000, Int(lo=10)),
    "toy.swd_projections": Key(256, Int(lo=1)),
    "toy.plot_samples": Key(2000, Int(lo=1)),
    "digits.dataset": Key("digits", Choice(("digits", "fashion_mnist"))),
    "digits.path": Key("/usr/share/datasets/fashion-mnist", Str()),
    "digits.components": Key(8, Int(lo=1)),
    "digits.loss": Key("gm_transition", Choice(("gm_transition", "gm_kl"))),
    "digits.trans_ratio": Key(0.5, Float(lo=0.0, lo_open=True, hi=1.0)),
    "digits.network": Key("mlp", Choice(("mlp", "unet"))),
    "digits.unet_features": Key((32, 64), Ints(lo=1)),
    "digits.downsample": Key(1, Int(lo=1)),
    "digits.real_samples": Key(0, Int(lo=0)),
    "digits.methods": Key(("pg", "cfg", "cfg_gm"), Names(("pg", "cfg", "cfg_gm"))),
    "digits.seeds": Key((0,), Ints(lo=0)),
    "digits.width": Key(256, Int(lo=1)),
    "digits.depth": Key(3, Int(lo=1)),
    "digits.batch_size": Key(256, Int(lo=1)),
    "digits.p_uncond": Key(0.1, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "digits.nfes": Key((4, 8, 32), Ints(lo=1)),
    "digits.gm_solver": Key("gm_ode2", Choice(GM_SOLVERS)),
    # Heun evaluates at t = 0, where the guided velocity (x − x̂₀)/t of a CFG point mass is
    # undefined; the digits baseline uses Euler or DDPM.
    "digits.fm_solver": Key("euler", Choice(("euler", "ddpm"))),
    "digits.substep_budget": Key(128, Int(lo=1)),
    "digits.pg_scales": Key((0.0, 0.15, 0.3, 0.45, 0.6, 0.75),
                           Floats(lo=0.0, hi=1.0, hi_open=True)),
    "digits.cfg_scales": Key((1.0, 1.5, 2.0, 3.0, 4.0, 5.0), Floats(lo=0.0)),
    "digits.orthogonal": Key(1.0, Float(lo=0.0, hi=1.0)),
    "digits.samples_per_class": Key(100, Int(lo=2)),
    "digits.test_fraction": Key(0.25, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "digits.classifier_steps": Key(1500, Int(lo=1)),
    "digits.classifier_lr": Key(1e-3, Float(lo=0.0, lo_open=True), before=1e-3),
    "digits.classifier_batch_size": Key(128, Int(lo=1), before=128),
    "digits.knn_k": Key(3, Int(lo=1)),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/gmflow/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    if config.toy.mmd_samples > config.toy.num_samples:
        raise ConfigError(f"config key 'toy.mmd_samples' = {config.toy.mmd_samples} is not "
                          f"allowed; it must be <= toy.num_samples = {config.toy.num_samples}")
    if config.digits.samples_per_class <= config.digits.knn_k:
        raise ConfigError(f"config key 'digits.samples_per_class' = "
                          f"{config.digits.samples_per_class} is not allowed; it must exceed "
                          f"digits.knn_k = {config.digits.knn_k}")
    if config.digits.real_samples and config.digits.real_samples <= config.digits.knn_k:
        raise ConfigError(f"config key 'digits.real_samples' = {config.digits.real_samples} is "
                          f"not allowed; it must be 0 (all images) or exceed digits.knn_k = "
                          f"{config.digits.knn_k}")
    if len(set(config.digits.seeds)) != len(config.digits.seeds) or not config.digits.seeds:
        raise ConfigError(f"config key 'digits.seeds' = {tuple(config.digits.seeds)} is not "
                          "allowed; it must be a non-empty tuple of distinct seed offsets")
    if "toy" in config.parts and not (config.toy.components or config.toy.fm_baseline):
        raise ConfigError("the toy part needs at least one model: toy.components or "
                          "toy.fm_baseline")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))
