"""What a spurious-ridge experiment config may hold, and the checks run before any compute.

Blocks: `parts` (which of gaussian / rf / digits to run), `gaussian` (settings, sizes, λ
grid, seeds), `rf` (random features on one Gaussian setting), `digits` (coloured 8×8
digits), `eval`, plus `tag` and `seed`. No train/mesh blocks: nothing is trained by
gradient descent here.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Ints, Names, Rule, Str
from lib.spurious_ridge.data import SETTINGS
from lib.spurious_ridge.random_features import ACTIVATIONS

PARTS = ("gaussian", "rf", "digits")


def _grid(prefix: str) -> dict[str, Rule]:
    return {f"{prefix}.lambda_min": Float(lo=0.0, lo_open=True),
            f"{prefix}.lambda_max": Float(lo=0.0, lo_open=True),
            f"{prefix}.num_lambdas": Int(lo=3, hi=200)}


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(PARTS),
    "gaussian.settings": Names(tuple(SETTINGS)),
    "gaussian.d": Int(lo=2),
    "gaussian.noise": Float(lo=0.0),
    "gaussian.num_seeds": Int(lo=2),
    "gaussian.theory_points": Int(lo=3, hi=2000),
    "gaussian.target_rel_err": Float(lo=0.0, lo_open=True, hi=1.0),
    **_grid("gaussian"),
    "rf.setting": Choice(tuple(SETTINGS)),
    "rf.d": Int(lo=2),
    "rf.activation": Choice(tuple(ACTIVATIONS)),
    "rf.widths": Ints(lo=1),
    "rf.equiv_width": Int(lo=1),
    "rf.width_sweep_lambda": Float(lo=0.0, lo_open=True),
    "rf.num_seeds": Int(lo=2),
    "rf.n_test": Int(lo=10),
    **_grid("rf"),
    "digits.rho": Float(lo=0.0, hi=1.0),
    "digits.colour": Choice(("background", "foreground")),
    "digits.tint": Float(lo=0.0),
    "digits.noise": Float(lo=0.0),
    "digits.train_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "digits.num_seeds": Int(lo=2),
    "digits.num_permutations": Int(lo=1),
    "digits.widths": Ints(lo=1),
    "digits.rf_lambda": Float(lo=0.0, lo_open=True),
    "digits.activation": Choice(tuple(ACTIVATIONS)),
    "digits.moment_draws": Int(lo=1),
    **_grid("digits"),
    "eval.plots": Bool(),
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
