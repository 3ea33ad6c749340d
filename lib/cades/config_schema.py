"""What a CADES experiment config may hold, and the checks run before any compute.

Blocks: `parts` (which of spp / multivariate / fpr to run), `spp` (goodness-of-fit
alternatives to a Poisson process, true model), `multivariate` (server and latency
scenarios, fitted models), `bandwidths`, `hawkes` (MLE), `neural` (the neural TPP, trained
by `lib.common.train_loop` with the shared `train` and `mesh` blocks), `fpr` (false
positive rate over many calibration/test splits), `eval`, plus `tag` and `seed`.

Learning rates are bounded by 1 (Adam's step is about the learning rate per parameter; a
neural TPP at 1e6 reached a loss of 8e11). A fit that still diverges inside the bounds is
stopped by `lib.cades.divergence` before anything is written.
"""
from __future__ import annotations

import ml_collections

from lib.cades.scenarios import ALL_SPP_FAMILIES, MULTIVARIATE
from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Floats, Int, Names, Rule, Str

PARTS = ("spp", "multivariate", "fpr")
MODELS = ("hawkes", "neural")
FPR_SETTINGS = ("spp", "server", "latency")


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(PARTS),
    "spp.families": Names(ALL_SPP_FAMILIES),
    "spp.t_max": Float(lo=0.0, lo_open=True),
    "spp.max_len": Int(lo=8),
    "spp.max_len_hawkes": Int(lo=8),
    "spp.etas": Floats(0.0, 0.95, increasing=True),
    "spp.n_cal": Int(lo=10),
    "spp.n_test": Int(lo=10),
    "spp.num_seeds": Int(lo=2),
    "multivariate.scenarios": Names(MULTIVARIATE),
    "multivariate.models": Names(MODELS),
    "multivariate.t_max": Float(lo=0.0, lo_open=True),
    "multivariate.max_len": Int(lo=8),
    "multivariate.etas": Floats(0.0, 1.0, increasing=True),
    "multivariate.n_train": Int(lo=8),
    "multivariate.n_cal": Int(lo=10),
    "multivariate.n_test": Int(lo=10),
    "multivariate.num_seeds": Int(lo=2),
    "bandwidths.mode": Choice(("paper", "fixed")),
    "bandwidths.h_arr": Float(lo=0.0, lo_open=True),
    "bandwidths.h_int": Float(lo=0.0, lo_open=True),
    "hawkes.num_steps": Int(lo=1),
    "hawkes.lr": Float(lo=0.0, hi=1.0, lo_open=True),
    "neural.hidden": Int(lo=1),
    "neural.mark_dim": Int(lo=1),
    "neural.num_components": Int(lo=1),
    "neural.lr": Float(lo=0.0, hi=1.0, lo_open=True),
    "neural.batch_size": Int(lo=1),
    "neural.grad_clip": Float(lo=0.0, lo_open=True),
    "fpr.settings": Names(FPR_SETTINGS),
    "fpr.alphas": Floats(0.0, 0.5, increasing=True),
    "fpr.delta": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "fpr.n_cal": Int(lo=10),
    "fpr.n_test": Int(lo=1),
    "fpr.num_blocks": Int(lo=2),
    "fpr.reps_per_block": Int(lo=1),
    "fpr.block_size": Int(lo=11),
    "eval.chunk": Int(lo=1),
    "eval.plots": Bool(),
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
    f = config.fpr
    if f.n_cal + f.n_test > f.block_size:
        raise ConfigError(f"config key 'fpr.block_size' = {f.block_size!r} is not allowed; it must "
                          f"be >= fpr.n_cal + fpr.n_test = {f.n_cal + f.n_test}")
    if 0.0 in tuple(f.alphas):
        raise ConfigError("config key 'fpr.alphas' must not contain 0")
    if config.neural.batch_size > config.multivariate.n_train:
        raise ConfigError(f"config key 'neural.batch_size' = {config.neural.batch_size!r} is not "
                          f"allowed; it must be <= multivariate.n_train = "
                          f"{config.multivariate.n_train}")
    for name in ("spp.max_len", "spp.max_len_hawkes", "multivariate.max_len"):
        block, key = name.split(".")
        if config[block][key] % 8:
            raise ConfigError(f"config key '{name}' = {config[block][key]!r} is not allowed; "
                              "expected a multiple of 8")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
