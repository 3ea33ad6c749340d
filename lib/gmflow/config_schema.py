"""What a GMFlow experiment config may hold, and the checks run before any compute.

Blocks: `train`/`mesh` (shared harness; `train.num_steps` is the step count of every model),
`optim`, `toy` (2-D checkerboard / Gaussian grid: GMFlow K sweep vs flow matching over NFE),
`digits` (class-conditional 8×8 digits or Fashion-MNIST, MLP or UNet: probabilistic guidance
vs CFG, over one or several seeds),
`parts`, `tag`, `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Floats, Int, Ints, Names, Rule, Str
from lib.gmflow.samplers import FM_SOLVERS, GM_SOLVERS
from lib.gmflow.toys import TOYS

PARTS = ("toy", "digits")


SCHEMA: dict[str, Rule] = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(PARTS),
    "optim.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.warmup_steps": Int(lo=0),
    "optim.ema_decay": Float(lo=0.0, hi=1.0, hi_open=True),
    "toy.datasets": Names(TOYS),
    "toy.components": Ints(lo=1),
    "toy.grid_components": Ints(lo=1),
    "toy.fm_baseline": Bool(),
    "toy.loss": Choice(("gm_transition", "gm_kl")),
    "toy.trans_ratio": Float(lo=0.0, lo_open=True, hi=1.0),
    "toy.width": Int(lo=1),
    "toy.depth": Int(lo=1),
    "toy.coord_embed_dim": Int(lo=0),
    "toy.batch_size": Int(lo=1),
    "toy.nfes": Ints(lo=1),
    "toy.gm_solvers": Names(GM_SOLVERS),
    "toy.fm_solvers": Names(FM_SOLVERS),
    "toy.substep_budget": Int(lo=1),
    "toy.num_samples": Int(lo=10),
    "toy.mmd_samples": Int(lo=10),
    "toy.swd_projections": Int(lo=1),
    "toy.plot_samples": Int(lo=1),
    "digits.dataset": Choice(("digits", "fashion_mnist")),
    "digits.path": Str(),
    "digits.components": Int(lo=1),
    "digits.loss": Choice(("gm_transition", "gm_kl")),
    "digits.trans_ratio": Float(lo=0.0, lo_open=True, hi=1.0),
    "digits.network": Choice(("mlp", "unet")),
    "digits.unet_features": Ints(lo=1),
    "digits.downsample": Int(lo=1),
    "digits.real_samples": Int(lo=0),
    "digits.methods": Names(("pg", "cfg", "cfg_gm")),
    "digits.seeds": Ints(lo=0),
    "digits.width": Int(lo=1),
    "digits.depth": Int(lo=1),
    "digits.batch_size": Int(lo=1),
    "digits.p_uncond": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "digits.nfes": Ints(lo=1),
    "digits.gm_solver": Choice(GM_SOLVERS),
    # Heun evaluates at t = 0, where the guided velocity (x − x̂₀)/t of a CFG point mass is
    # undefined; the digits baseline uses Euler or DDPM.
    "digits.fm_solver": Choice(("euler", "ddpm")),
    "digits.substep_budget": Int(lo=1),
    "digits.pg_scales": Floats(lo=0.0, hi=1.0, hi_open=True),
    "digits.cfg_scales": Floats(lo=0.0),
    "digits.orthogonal": Float(lo=0.0, hi=1.0),
    "digits.samples_per_class": Int(lo=2),
    "digits.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "digits.classifier_steps": Int(lo=1),
    "digits.knn_k": Int(lo=1),
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
