"""What a risk-IRL experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/risk_irl file states only what
differs, through `config(overrides)`.

Blocks: `parts` (which experiments run), `grid` (horizon H and n = 1/ε₀), `tractor` (the
algorithm's settings shared by every part), `caty` (confidence δ), `investment`
(simulated experts in the investment MDP), `participants` (the human data; needs
`data_dir`), `random` (random MDPs of several sizes), `multi_env` (several environments and
the size of the compatible set), `eval`, plus `tag` and `seed`. No train/mesh blocks:
TRACTOR-UL runs ≤ 100 projected subgradient steps inside one jit-compiled `lax.scan`,
vectorised over step sizes, initial utilities and seeds; there is no network to checkpoint.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Ints, Key, Names, Str)

FAMILIES = ("linear", "sqrt", "square", "convex_concave", "strong_concave", "strong_convex")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"FAMILIES": "lib.risk_irl.utilities:FAMILIES"}

PARTS = ("investment", "participants", "random", "multi_env")


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(("investment", "random", "multi_env"), Names(PARTS)),
    "grid.horizon": Key(5, Int(lo=1, hi=50)),
    "grid.n": Key(100, Int(lo=1, hi=1000)),
    "tractor.num_iters": Key(70, Int(lo=1, hi=100_000)),
    "tractor.eval_every": Key(5, Int(lo=1)),
    "tractor.lipschitz": Key(10.0, Float(lo=1.0)),
    "tractor.method": Key("mc", Choice(("mc", "exact"))),
    "tractor.num_traj": Key(10_000, Int(lo=1, hi=10_000_000)),
    "tractor.num_expert": Key(10_000, Int(lo=1, hi=10_000_000)),
    "tractor.proj_iters": Key(1000, Int(lo=1, hi=1_000_000)),
    "caty.delta": Key(0.05, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "investment.experts": Key(("sqrt", "linear", "square"), Names(FAMILIES)),
    "investment.inits": Key(("linear", "sqrt", "square"), Names(FAMILIES)),
    "investment.step_sizes": Key((0.01, 0.5, 5.0, 100.0, 1000.0, 10000.0),
                                Floats(lo=0.0, lo_open=True)),
    "investment.adam_step_sizes": Key((0.05, 0.5), Floats(lo=0.0, lo_open=True)),
    "investment.target_step_size": Key(100.0, Float(lo=0.0, lo_open=True)),
    "investment.num_seeds": Key(5, Int(lo=1)),
    "investment.noise": Key(0.25, Float(lo=0.0, hi=1.0)),
    "participants.data_dir": Key("", Str()),
    "participants.participant": Key(9, Int(lo=0)),
    "random.num_states": Key((20, 100, 1000), Ints(lo=2)),
    "random.num_actions": Key((5, 10, 20), Ints(lo=2)),
    "random.num_seeds": Key((5, 5, 1), Ints(lo=1)),
    "random.step_size": Key(5.0, Float(lo=0.0, lo_open=True)),
    "random.expert": Key("convex_concave", Choice(FAMILIES)),
    "random.init": Key("linear", Choice(FAMILIES)),
    "random.noise": Key(0.25, Float(lo=0.0, hi=1.0)),
    "random.eval_every": Key(5, Int(lo=1)),
    "multi_env.num_envs": Key((1, 5, 20), Ints(lo=1)),
    "multi_env.num_states": Key(4, Int(lo=2)),
    "multi_env.num_actions": Key(3, Int(lo=2)),
    "multi_env.num_seeds": Key(3, Int(lo=1)),
    "multi_env.step_size": Key(1.0, Float(lo=0.0, lo_open=True)),
    "multi_env.noise": Key(0.25, Float(lo=0.0, hi=1.0)),
    "multi_env.set_samples": Key(400, Int(lo=10)),
    "multi_env.set_tolerances": Key((0.0001, 0.001, 0.01), Floats(lo=0.0, lo_open=True)),
    "multi_env.knots": Key(6, Int(lo=2, hi=100)),
    "eval.plots": Key(True, Bool()),
}


config = config_lib.config_builder(KEYS, "lib/risk_irl/config_schema.py")


def _fail(key, value, allowed):
    raise ConfigError(f"config key '{key}' = {value!r} is not allowed; {allowed}")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    t, g = config.tractor, config.grid
    if t.num_iters % t.eval_every:
        _fail("tractor.eval_every", t.eval_every,
              f"it must divide tractor.num_iters = {t.num_iters}")
    if t.num_iters % config.random.eval_every:
        _fail("random.eval_every", config.random.eval_every,
              f"it must divide tractor.num_iters = {t.num_iters}")
    if t.lipschitz * g.horizon < g.horizon:
        _fail("tractor.lipschitz", t.lipschitz, "need L >= 1 for U(0) = 0, U(H) = H")
    r = config.random
    if not (len(r.num_states) == len(r.num_actions) == len(r.num_seeds)) or not r.num_states:
        _fail("random.num_seeds", tuple(r.num_seeds),
              f"random.num_states {tuple(r.num_states)}, random.num_actions "
              f"{tuple(r.num_actions)} and random.num_seeds need one entry per MDP size")
    if r.expert == r.init:
        _fail("random.init", r.init, f"it must differ from random.expert = {r.expert!r} "
              "(an expert-optimal start has nothing to learn)")
    m = config.multi_env
    if list(m.num_envs) != sorted(set(m.num_envs)):
        _fail("multi_env.num_envs", tuple(m.num_envs), "expected distinct increasing counts")
    if config.investment.target_step_size not in tuple(config.investment.step_sizes):
        _fail("investment.target_step_size", config.investment.target_step_size,
              f"expected one of investment.step_sizes = {tuple(config.investment.step_sizes)}")
    if "participants" in config.parts:
        if not config.participants.data_dir:
            _fail("participants.data_dir", config.participants.data_dir,
                  "part 'participants' needs the directory holding data_MDP.csv and data_SG.csv "
                  "(e.g. data/risk_irl), or drop 'participants' from parts")
        if g.n % 100 or g.horizon != 5:
            _fail("grid.n", g.n, "the participants' questionnaire needs H = 5 and n a multiple "
                  "of 100 (checkpoints every 30 € with 1 unit = 1000 €)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))
