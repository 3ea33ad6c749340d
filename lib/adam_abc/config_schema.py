"""What an adam_abc experiment config may hold, and the checks run before any compute.

Blocks: `parts` (rate / asymptotic), `num_runs` (independent runs per setting and
horizon), `problem` (sizes of the objectives), `noise` (oracle constants), `adam` (β1, ε,
v_0), `rate` (finite-horizon sweep), `asymptotic` (Robbins–Monro runs), `eval`, `mesh`,
plus `tag` and `seed`. Setting names are `<problem>-<noise>`, extra runs
`<problem>-<noise>/<method>` (see `lib.adam_abc.settings`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import ml_collections

from lib.adam_abc import settings
from lib.common import config as config_lib
from lib.common.config import Bool, ConfigError, Float, Int, Ints, Rule, Str

PARTS = ("rate", "asymptotic")


@dataclasses.dataclass(frozen=True)
class Names(Rule):
    """A sequence of distinct strings, each accepted by `parse` (non-empty unless allowed)."""

    parse: Callable[[str], Any] = settings.parse_setting
    what: str = "setting names '<problem>-<noise>'"
    allow_empty: bool = False
    options: tuple = ()

    def check(self, key: str, value: Any) -> None:
        allowed = f"a {'' if self.allow_empty else 'non-empty '}sequence of distinct {self.what}"
        if self.options:
            allowed += f" from {list(self.options)}"
        if (not isinstance(value, (tuple, list)) or (not value and not self.allow_empty)
                or len(set(value)) != len(value) or not all(isinstance(v, str) for v in value)):
            self._fail(key, value, allowed)
        for v in value:
            if self.options and v not in self.options:
                self._fail(key, value, allowed)
            try:
                self.parse(v)
            except ValueError as err:
                raise ConfigError(f"config key '{key}' = {value!r} is not allowed: {err}") from None


def _identity(v: str) -> str:
    return v


POS = dict(lo=0.0, lo_open=True)
UNIT = dict(lo=0.0, hi=1.0, hi_open=True)
SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(parse=_identity, what="part names", options=PARTS),
    "num_runs": Int(lo=1),
    "problem.dim": Int(lo=1, hi=4096),
    "problem.condition": Float(lo=1.0),
    "problem.init_distance": Float(lo=0.0),
    "problem.nonconvex_rows": Int(lo=1),
    "problem.nonconvex_lambda": Float(lo=0.0),
    "problem.label_noise": Float(lo=0.0),
    "problem.n": Int(lo=2),
    "problem.logistic_signal": Float(lo=0.0),
    "problem.data_seed": Int(lo=0),
    "noise.sigma": Float(lo=0.0),
    "noise.mult": Float(lo=0.0),
    "noise.student_df": Int(lo=3, hi=64),
    "noise.skew_p": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "noise.batch_size": Int(lo=1),
    "adam.b1": Float(**UNIT),
    "adam.eps": Float(lo=0.0),
    "adam.eps_alt": Float(lo=0.0),
    "adam.v_init": Float(lo=0.0),
    "rate.settings": Names(allow_empty=True),
    "rate.methods": Names(parse=_identity, what="method names", allow_empty=True,
                          options=tuple(m for m in settings.METHODS if m not in settings.CONTROLS)),
    "rate.extra": Names(parse=settings.parse_run, what="runs '<problem>-<noise>/<method>'",
                        allow_empty=True),
    "rate.horizons": Ints(lo=2),
    "rate.records": Int(lo=1),
    "rate.alpha_hat": Float(**POS),
    "rate.sgd_alpha_hat": Float(**POS),
    "rate.beta2_c": Float(**POS),
    "rate.control_beta2": Float(**UNIT),
    "rate.theory_slope": Float(),
    "rate.tolerance": Float(**POS),
    "rate.num_boot": Int(lo=10),
    "asymptotic.settings": Names(allow_empty=True),
    "asymptotic.methods": Names(parse=_identity, what="method names", allow_empty=True,
                                options=tuple(m for m in settings.METHODS
                                              if m not in settings.CONTROLS)),
    "asymptotic.extra": Names(parse=settings.parse_run, what="runs '<problem>-<noise>/<method>'",
                              allow_empty=True),
    "asymptotic.num_steps": Int(lo=10),
    "asymptotic.records": Int(lo=2),
    "asymptotic.alpha0": Float(**POS),
    "asymptotic.sgd_alpha0": Float(**POS),
    "asymptotic.power": Float(lo=0.0),
    "asymptotic.offset": Float(lo=0.0),
    "asymptotic.beta2_c": Float(**POS),
    "asymptotic.beta2_power": Float(lo=0.0),
    "asymptotic.control_alpha": Float(**POS),
    "asymptotic.control_beta2": Float(**UNIT),
    "asymptotic.threshold": Float(**POS),
    "asymptotic.late_from": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "asymptotic.min_decay": Float(**POS),
    "eval.plots": Bool(),
    **config_lib.MESH_SCHEMA,
}


def _fail(key: str, value, why: str) -> None:
    raise ConfigError(f"config key '{key}' = {value!r} is not allowed; {why}")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    r, s = config.rate, config.asymptotic
    hs = tuple(r.horizons)
    if len(hs) < 2 or list(hs) != sorted(set(hs)):
        _fail("rate.horizons", hs, "expected at least 2 increasing horizons (a slope needs 2)")
    for t in hs:
        if t % r.records:
            _fail("rate.horizons", hs, f"every horizon must be a multiple of rate.records = "
                  f"{r.records} (the record grid is kT/K)")
        if r.beta2_c > t:
            _fail("rate.beta2_c", r.beta2_c, f"β2 = 1 − c/T < 0 at T = {t}")
    if s.beta2_c / (1.0 + s.offset) ** s.beta2_power > 1.0:
        _fail("asymptotic.beta2_c", s.beta2_c, "β2,1 = 1 − c/(1 + offset)^beta2_power < 0; "
              "lower it or raise asymptotic.offset")
    if s.records > s.num_steps:
        _fail("asymptotic.records", s.records, f"at most asymptotic.num_steps = {s.num_steps}")
    for part, block in (("rate", r), ("asymptotic", s)):
        if part in config.parts and not (len(block.settings) * len(block.methods) + len(block.extra)):
            _fail(f"{part}.settings", block.settings, f"the {part} part has no run: it needs "
                  f"settings and methods, or extra runs")
    if config.adam.eps == 0.0 and config.adam.v_init == 0.0:
        _fail("adam.eps", 0.0, "with adam.v_init = 0 the update is 0/0 at a zero gradient")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
