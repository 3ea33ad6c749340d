"""Spurious ridge's config: every key's default with its rule (`KEYS`; a configs file states
only what differs, through `config(overrides)`), and the checks run before any compute.

Blocks: `parts` (which of gaussian / rf / digits to run), `gaussian` (settings, sizes, λ
grid, seeds), `rf` (random features on one Gaussian setting), `digits` (coloured 8×8
digits), `eval`, plus `tag` and `seed`. No train/mesh blocks: nothing is trained by
gradient descent here.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names, Str)

SETTINGS = ("base", "weak_corr", "strong_corr", "simple_y", "overparam")
RF_ACTIVATIONS = ("tanh", "erf", "linear")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"SETTINGS": "lib.spurious_ridge.data:SETTINGS",
           "RF_ACTIVATIONS": "lib.spurious_ridge.random_features:RF_ACTIVATIONS"}

PARTS = ("gaussian", "rf", "digits")


def _grid(prefix: str, lambda_min: float, lambda_max: float) -> dict[str, Key]:
    """The λ grid keys of one part: its default end points; the point count each variant states."""
    return {f"{prefix}.lambda_min": Key(lambda_min, Float(lo=0.0, lo_open=True)),
            f"{prefix}.lambda_max": Key(lambda_max, Float(lo=0.0, lo_open=True)),
            f"{prefix}.num_lambdas": Key(REQUIRED, Int(lo=3, hi=200))}


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(("gaussian", "rf", "digits"), Names(PARTS)),
    "gaussian.settings": Key(("base", "weak_corr", "strong_corr", "simple_y", "overparam"),
                            Names(SETTINGS)),
    "gaussian.d": Key(REQUIRED, Int(lo=2)),
    "gaussian.noise": Key(0.5, Float(lo=0.0)),
    "gaussian.num_seeds": Key(REQUIRED, Int(lo=2)),
    "gaussian.theory_points": Key(REQUIRED, Int(lo=3, hi=2000)),
    "gaussian.target_rel_err": Key(0.05, Float(lo=0.0, lo_open=True, hi=1.0)),
    **_grid("gaussian", 1e-3, 1e2),
    "rf.setting": Key("base", Choice(SETTINGS)),
    "rf.d": Key(REQUIRED, Int(lo=2)),
    "rf.activation": Key("tanh", Choice(RF_ACTIVATIONS)),
    "rf.widths": Key(REQUIRED, Ints(lo=1)),
    "rf.equiv_width": Key(REQUIRED, Int(lo=1)),
    "rf.width_sweep_lambda": Key(1e-5, Float(lo=0.0, lo_open=True)),
    "rf.num_seeds": Key(REQUIRED, Int(lo=2)),
    "rf.n_test": Key(REQUIRED, Int(lo=10)),
    **_grid("rf", 1e-5, 1e-1),
    "digits.rho": Key(0.8, Float(lo=0.0, hi=1.0)),
    "digits.colour": Key("background", Choice(("background", "foreground"))),
    "digits.tint": Key(0.5, Float(lo=0.0)),
    "digits.noise": Key(1.0, Float(lo=0.0)),
    "digits.train_fraction": Key(0.6, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "digits.num_seeds": Key(REQUIRED, Int(lo=2)),
    "digits.num_permutations": Key(REQUIRED, Int(lo=1)),
    "digits.widths": Key(REQUIRED, Ints(lo=1)),
    "digits.rf_lambda": Key(1e-4, Float(lo=0.0, lo_open=True)),
    "digits.activation": Key("tanh", Choice(RF_ACTIVATIONS)),
    "digits.moment_draws": Key(REQUIRED, Int(lo=1)),
    **_grid("digits", 1e-2, 1e3),
    "eval.plots": Key(True, Bool()),
}


config = config_lib.config_builder(KEYS, "lib/spurious_ridge/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    for block in ("gaussian", "rf", "digits"):
        lo, hi = config[block].lambda_min, config[block].lambda_max
        if hi <= lo:
            raise ConfigError(f"config key '{block}.lambda_max' = {hi!r} is not allowed; it must "
                              f"exceed '{block}.lambda_min' = {lo!r}")
    if config.rf.equiv_width not in tuple(config.rf.widths):
        raise ConfigError(f"config key 'rf.equiv_width' = {config.rf.equiv_width!r} is not "
                          f"allowed; expected one of rf.widths = {list(config.rf.widths)}")
    if len(config.rf.widths) < 2 or len(config.digits.widths) < 2:
        raise ConfigError("rf.widths and digits.widths need at least 2 widths each (a sweep)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))
