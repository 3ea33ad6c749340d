"""What a CADES experiment config may hold, and the checks run before any compute.

Blocks: `parts` (which of spp / multivariate / fpr to run), `spp` (goodness-of-fit
alternatives to a Poisson process, true model), `multivariate` (server and latency
scenarios, fitted models), `bandwidths`, `hawkes` (MLE), `neural` (the neural TPP, trained
by `lib.common.train_loop` with the shared `train` and `mesh` blocks), `fpr` (false
positive rate over many calibration/test splits), `eval`, plus `tag` and `seed`.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import ml_collections

from lib.cades.scenarios import MULTIVARIATE, SPP_FAMILIES
from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Rule, Str

PARTS = ("spp", "multivariate", "fpr")
MODELS = ("hawkes", "neural")
FPR_SETTINGS = ("spp", "server", "latency")


@dataclasses.dataclass(frozen=True)
class Names(Rule):
    """A non-empty tuple/list of distinct names, each one of `options`."""

    options: tuple = ()

    def check(self, key: str, value: Any) -> None:
        if (not isinstance(value, (tuple, list)) or not value or len(set(value)) != len(value)
                or any(v not in self.options for v in value)):
            self._fail(key, value, f"a non-empty sequence of distinct names from {list(self.options)}")


@dataclasses.dataclass(frozen=True)
class Floats(Rule):
    """A non-empty, strictly increasing tuple/list of floats in [lo, hi]."""

    lo: float = 0.0
    hi: float = 1.0
    hi_open: bool = False

    def check(self, key: str, value: Any) -> None:
        allowed = (f"a non-empty increasing sequence of floats in [{self.lo}, {self.hi}"
                   f"{')' if self.hi_open else ']'}")
        if not isinstance(value, (tuple, list)) or not value:
            self._fail(key, value, allowed)
        for v in value:
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < self.lo or v > self.hi \
                    or (self.hi_open and v == self.hi):
                self._fail(key, value, allowed)
        if any(b <= a for a, b in zip(value, value[1:])):
            self._fail(key, value, allowed)


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(PARTS),
    "spp.families": Names(SPP_FAMILIES),
    "spp.t_max": Float(lo=0.0, lo_open=True),
    "spp.max_len": Int(lo=8),
    "spp.etas": Floats(0.0, 0.95),
    "spp.n_cal": Int(lo=10),
    "spp.n_test": Int(lo=10),
    "spp.num_seeds": Int(lo=2),
    "multivariate.scenarios": Names(MULTIVARIATE),
    "multivariate.models": Names(MODELS),
    "multivariate.t_max": Float(lo=0.0, lo_open=True),
    "multivariate.max_len": Int(lo=8),
    "multivariate.etas": Floats(0.0, 1.0),
    "multivariate.n_train": Int(lo=8),
    "multivariate.n_cal": Int(lo=10),
    "multivariate.n_test": Int(lo=10),
    "multivariate.num_seeds": Int(lo=2),
    "bandwidths.mode": Choice(("paper", "fixed")),
    "bandwidths.h_arr": Float(lo=0.0, lo_open=True),
    "bandwidths.h_int": Float(lo=0.0, lo_open=True),
    "hawkes.num_steps": Int(lo=1),
    "hawkes.learning_rate": Float(lo=0.0, lo_open=True),
    "neural.hidden": Int(lo=1),
    "neural.mark_dim": Int(lo=1),
    "neural.num_components": Int(lo=1),
    "neural.learning_rate": Float(lo=0.0, lo_open=True),
    "neural.batch_size": Int(lo=1),
    "neural.grad_clip": Float(lo=0.0, lo_open=True),
    "fpr.settings": Names(FPR_SETTINGS),
    "fpr.alphas": Floats(0.0, 0.5),
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
    for name in ("spp.max_len", "multivariate.max_len"):
        block, key = name.split(".")
        if config[block][key] % 8:
            raise ConfigError(f"config key '{name}' = {config[block][key]!r} is not allowed; "
                              "expected a multiple of 8")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
