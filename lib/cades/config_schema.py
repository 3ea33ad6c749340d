"""What a CADES experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/cades file states only what
differs, through `config(overrides)`.

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

from lib.common import config as config_lib
from lib.common.config import (REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Key,
                               Names, Str)

SPP_FAMILIES = ("increasing_rate", "decreasing_rate", "inhomogeneous", "stopping", "renewal_up",
                "renewal_down", "hawkes", "self_correcting", "uniform")
ALL_SPP_FAMILIES = SPP_FAMILIES + ("inhomogeneous_official", "uniform_official")
OFFICIAL_SPP_FAMILIES = ("increasing_rate", "decreasing_rate", "inhomogeneous_official",
                         "renewal_up", "renewal_down", "hawkes", "self_correcting", "stopping",
                         "uniform_official")
MULTIVARIATE = ("server_stop", "server_overload", "latency")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {name: f"lib.cades.scenarios:{name}" for name in (
    "SPP_FAMILIES", "ALL_SPP_FAMILIES", "OFFICIAL_SPP_FAMILIES", "MULTIVARIATE")}
PARTS = ("spp", "multivariate", "fpr")
MODELS = ("hawkes", "neural")
FPR_SETTINGS = ("spp", "server", "latency")


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(PARTS, Names(PARTS)),
    "spp.families": Key(SPP_FAMILIES, Names(ALL_SPP_FAMILIES)),
    "spp.t_max": Key(100.0, Float(lo=0.0, lo_open=True)),
    "spp.max_len": Key(512, Int(lo=8)),
    "spp.max_len_hawkes": Key(512, Int(lo=8)),
    "spp.etas": Key((0.0, 0.25, 0.5, 0.75), Floats(0.0, 0.95, increasing=True)),
    "spp.n_cal": Key(200, Int(lo=10)),
    "spp.n_test": Key(100, Int(lo=10)),
    "spp.num_seeds": Key(3, Int(lo=2)),
    "multivariate.scenarios": Key(MULTIVARIATE, Names(MULTIVARIATE)),
    "multivariate.models": Key(MODELS, Names(MODELS)),
    "multivariate.t_max": Key(30.0, Float(lo=0.0, lo_open=True)),
    "multivariate.max_len": Key(512, Int(lo=8)),
    "multivariate.etas": Key((0.0, 0.5, 1.0), Floats(0.0, 1.0, increasing=True)),
    "multivariate.n_train": Key(100, Int(lo=8)),
    "multivariate.n_cal": Key(200, Int(lo=10)),
    "multivariate.n_test": Key(100, Int(lo=10)),
    "multivariate.num_seeds": Key(3, Int(lo=2)),
    "bandwidths.mode": Key("paper", Choice(("paper", "fixed"))),
    "bandwidths.h_arr": Key(0.1, Float(lo=0.0, lo_open=True)),
    "bandwidths.h_int": Key(1.0, Float(lo=0.0, lo_open=True)),
    "hawkes.num_steps": Key(200, Int(lo=1)),
    "hawkes.lr": Key(0.05, Float(lo=0.0, hi=1.0, lo_open=True)),
    "neural.hidden": Key(16, Int(lo=1)),
    "neural.mark_dim": Key(8, Int(lo=1)),
    "neural.num_components": Key(8, Int(lo=1)),
    "neural.lr": Key(3e-3, Float(lo=0.0, hi=1.0, lo_open=True)),
    "neural.batch_size": Key(16, Int(lo=1)),
    "neural.clip": Key(5.0, Float(lo=0.0, lo_open=True), was="neural.grad_clip"),
    "fpr.settings": Key(FPR_SETTINGS, Names(FPR_SETTINGS)),
    "fpr.alphas": Key((0.01, 0.05, 0.1), Floats(0.0, 0.5, increasing=True)),
    "fpr.delta": Key(0.1, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "fpr.n_cal": Key(400, Int(lo=10)),
    "fpr.n_test": Key(100, Int(lo=1)),
    "fpr.num_blocks": Key(20, Int(lo=2)),
    "fpr.reps_per_block": Key(50, Int(lo=1)),
    "fpr.block_size": Key(500, Int(lo=11)),
    "eval.chunk": Key(256, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    # train.num_steps: the neural TPP's steps
    **config_lib.keys_of_block(
        "train", config_lib.train_block(200, log_every=10, checkpoint_every=100),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/cades/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))
