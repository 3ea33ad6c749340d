"""What an adam_abc experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/adam_abc file states only what
differs, through `config(overrides)`.

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

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, ConfigError, Float, Int, Ints, Key, Rule, Str

PARTS = ("rate", "asymptotic")
METHODS = ("adam", "adam_eps", "sgd", "adam_const_alpha", "adam_const_beta2")
CONTROLS = ("adam_const_alpha", "adam_const_beta2")
# Names defined in modules that load JAX, copied so that config files load without it
# (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"METHODS": "lib.adam_abc.settings:METHODS",
           "CONTROLS": "lib.adam_abc.settings:CONTROLS"}


def _parse_setting(name: str) -> tuple[str, str]:
    from lib.adam_abc import settings   # JAX, loaded only when a config is checked
    return settings.parse_setting(name)


def _parse_run(name: str) -> tuple[str, str]:
    from lib.adam_abc import settings
    return settings.parse_run(name)


@dataclasses.dataclass(frozen=True)
class Names(Rule):
    """A sequence of distinct strings, each accepted by `parse` (non-empty unless allowed)."""

    parse: Callable[[str], Any] = _parse_setting
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
KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(("rate", "asymptotic"), Names(parse=_identity, what="part names", options=PARTS)),
    "num_runs": Key(REQUIRED, Int(lo=1)),
    "problem.dim": Key(10, Int(lo=1, hi=4096)),
    "problem.condition": Key(10.0, Float(lo=1.0)),
    "problem.init_distance": Key(3.0, Float(lo=0.0)),
    "problem.nonconvex_rows": Key(20, Int(lo=1)),
    "problem.nonconvex_lambda": Key(1.0, Float(lo=0.0)),
    "problem.label_noise": Key(1.0, Float(lo=0.0)),
    "problem.n": Key(256, Int(lo=2)),
    "problem.logistic_signal": Key(2.0, Float(lo=0.0)),
    "problem.data_seed": Key(0, Int(lo=0)),
    "noise.sigma": Key(1.0, Float(lo=0.0)),
    "noise.mult": Key(1.0, Float(lo=0.0)),
    "noise.student_df": Key(3, Int(lo=3, hi=64)),
    "noise.skew_p": Key(0.05, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "noise.batch_size": Key(2, Int(lo=1)),
    "adam.b1": Key(0.9, Float(**UNIT)),
    "adam.eps": Key(1e-8, Float(lo=0.0)),
    "adam.eps_alt": Key(0.1, Float(lo=0.0)),
    "adam.v_init": Key(0.0, Float(lo=0.0)),
    "rate.settings": Key(("quadratic-gaussian", "quadratic-student_t",
                          "quadratic-multiplicative", "quadratic-skewed", "nonconvex-gaussian",
                          "least_squares-minibatch", "logistic-minibatch"),
                         Names(allow_empty=True)),
    "rate.methods": Key(("adam", "sgd"), Names(
        parse=_identity, what="method names", allow_empty=True,
        options=tuple(m for m in METHODS if m not in CONTROLS))),
    "rate.extra": Key(("quadratic-gaussian/adam_eps", "quadratic-gaussian/adam_const_alpha",
                       "quadratic-skewed/adam_const_beta2"),
                      Names(parse=_parse_run, what="runs '<problem>-<noise>/<method>'",
                            allow_empty=True)),
    "rate.horizons": Key(REQUIRED, Ints(lo=2)),
    "rate.records": Key(REQUIRED, Int(lo=1)),
    "rate.alpha_hat": Key(1.0, Float(**POS)),
    "rate.sgd_alpha_hat": Key(2.0, Float(**POS)),
    "rate.beta2_c": Key(1.0, Float(**POS)),
    "rate.control_beta2": Key(0.9, Float(**UNIT)),
    "rate.theory_slope": Key(-0.5, Float()),
    "rate.tolerance": Key(0.1, Float(**POS)),
    "rate.num_boot": Key(200, Int(lo=10)),
    "asymptotic.settings": Key(("quadratic-gaussian", "quadratic-skewed", "nonconvex-student_t",
                                "least_squares-minibatch"),
                              Names(allow_empty=True)),
    "asymptotic.methods": Key(("adam", "sgd"), Names(
        parse=_identity, what="method names", allow_empty=True,
        options=tuple(m for m in METHODS if m not in CONTROLS))),
    "asymptotic.extra": Key(("quadratic-gaussian/adam_const_alpha",
                             "quadratic-skewed/adam_const_beta2",
                             "quadratic-gaussian/adam_const_beta2"),
                            Names(parse=_parse_run,
                                  what="runs '<problem>-<noise>/<method>'", allow_empty=True)),
    "asymptotic.num_steps": Key(REQUIRED, Int(lo=10)),
    "asymptotic.records": Key(REQUIRED, Int(lo=2)),
    "asymptotic.alpha0": Key(1.0, Float(**POS)),
    "asymptotic.sgd_alpha0": Key(2.0, Float(**POS)),
    "asymptotic.power": Key(0.6, Float(lo=0.0)),
    "asymptotic.offset": Key(10.0, Float(lo=0.0)),
    "asymptotic.beta2_c": Key(1.0, Float(**POS)),
    "asymptotic.beta2_power": Key(0.6, Float(lo=0.0)),
    "asymptotic.control_alpha": Key(0.1, Float(**POS)),
    "asymptotic.control_beta2": Key(0.9, Float(**UNIT)),
    "asymptotic.threshold": Key(0.1, Float(**POS)),
    "asymptotic.late_from": Key(0.1, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "asymptotic.min_decay": Key(0.1, Float(**POS)),
    "eval.plots": Key(True, Bool()),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}


config = config_lib.config_builder(KEYS, "lib/adam_abc/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))
