"""What a swe_gym experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/swe_gym file states only what
differs, through `config(overrides)`.

Blocks: `data` (generated benchmark), `sandbox` (test-run limits), `agent` (caps),
`search` (baseline), `lm` (workspace LM architecture + policy), `pretrain` (base LM),
`rft` (warm start, expert-iteration rounds, rollouts, caps ablation, fine-tuning), `verifier`, `scaling` (Pass@K / Best@K),
`served` (an optional OpenAI-compatible model evaluated as a ChatPolicy), `eval`, `tag`,
`seed`. `rft.caps` uses 0 for "no cap".
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names, Str
from lib.swe_gym import mutations

if TYPE_CHECKING:
    from lib.lm.model import LMConfig

KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "data.num_repos": Key(REQUIRED, Int(lo=2)),
    "data.num_test_repos": Key(REQUIRED, Int(lo=1)),
    "data.per_repo": Key(REQUIRED, Int(lo=1)),
    "data.kinds": Key(("flip_comparison", "off_by_one", "dropped_branch", "wrong_default",
                       "swapped_arguments", "combination"), Names(mutations.ALL_KINDS)),
    "data.themes_per_repo": Key(3, Int(lo=1, hi=4)),
    "data.funcs_per_theme": Key(5, Int(lo=1, hi=10)),
    "data.min_instances": Key(REQUIRED, Int(lo=1)),
    "sandbox.wall_s": Key(10.0, Float(lo=0.0, lo_open=True)),
    "sandbox.cpu_s": Key(10, Int(lo=1)),
    "sandbox.memory_mb": Key(1024, Int(lo=64)),
    "agent.max_turns": Key(30, Int(lo=1)),
    "agent.max_context": Key(32_000, Int(lo=64)),
    "agent.loop_window": Key(3, Int(lo=2)),
    "search.max_candidates": Key(40, Int(lo=1)),
    "search.max_turns": Key(REQUIRED, Int(lo=2)),
    "lm.bpe_merges": Key(REQUIRED, Int(lo=0)),
    "lm.d_model": Key(REQUIRED, Int(lo=8)),
    "lm.num_layers": Key(REQUIRED, Int(lo=1)),
    "lm.num_heads": Key(REQUIRED, Int(lo=1)),
    "lm.d_ff": Key(REQUIRED, Int(lo=8)),
    "lm.max_len": Key(REQUIRED, Int(lo=64)),
    "lm.max_edits": Key(3, Int(lo=1)),
    "lm.max_tokens": Key(40, Int(lo=8)),
    "pretrain.num_examples": Key(REQUIRED, Int(lo=8)),
    "pretrain.steps": Key(REQUIRED, Int(lo=1)),
    "pretrain.batch_size": Key(REQUIRED, Int(lo=1)),
    "pretrain.lr": Key(0.002, Float(lo=0.0, lo_open=True)),
    "rft.num_train": Key(REQUIRED, Int(lo=-1)),
    "rft.rollouts": Key(REQUIRED, Int(lo=1)),
    "rft.temperature": Key(1.0, Float(lo=0.0)),
    "rft.caps": Key((1, 2, 3, 0), Ints(lo=0)),
    "rft.main_cap": Key(2, Int(lo=0)),
    "rft.epochs": Key(3, Int(lo=1)),
    "rft.min_steps": Key(REQUIRED, Int(lo=1)),
    "rft.batch_size": Key(16, Int(lo=1)),
    "rft.lr": Key(0.0005, Float(lo=0.0, lo_open=True)),
    "rft.rounds": Key(2, Int(lo=1)),
    "rft.pool": Key(REQUIRED, Int(lo=1)),
    "rft.warm_start": Key(True, Bool()),
    "rft.warm_steps": Key(100, Int(lo=1)),
    "verifier.cap_positive": Key(2, Int(lo=1)),
    "verifier.epochs": Key(3, Int(lo=1)),
    "verifier.min_steps": Key(REQUIRED, Int(lo=1)),
    "verifier.batch_size": Key(16, Int(lo=1)),
    "verifier.lr": Key(0.0005, Float(lo=0.0, lo_open=True)),
    "verifier.max_chars": Key(1200, Int(lo=100)),
    "scaling.num_test": Key(-1, Int(lo=-1)),
    "scaling.rollouts": Key(16, Int(lo=1)),
    "scaling.ks": Key((1, 2, 4, 8, 16), Ints(lo=1)),
    "scaling.temperature": Key(0.7, Float(lo=0.0)),
    "scaling.num_subsamples": Key(100, Int(lo=1)),
    "served.base_url": Key("", Str()),
    "served.model": Key("", Str()),
    "served.tool_mode": Key("auto", Choice(("auto", "native", "text"))),
    "served.cache_dir": Key("", Str()),
    "served.max_turns": Key(30, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    "eval.recheck_disagreements": Key(10, Int(lo=0), before=10),   # rows kept in results.json
    "eval.target_gain": Key(0.0, Float(lo=0.0)),
}


config = config_lib.config_builder(KEYS, "lib/swe_gym/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    d = config.data
    if d.num_test_repos >= d.num_repos:
        raise ConfigError(f"config key 'data.num_test_repos' = {d.num_test_repos} is not allowed;"
                          f" it must be < 'data.num_repos' = {d.num_repos} (some repositories train)")
    if config.lm.d_model % config.lm.num_heads:
        raise ConfigError(f"config key 'lm.d_model' = {config.lm.d_model} is not allowed; it must "
                          f"be divisible by 'lm.num_heads' = {config.lm.num_heads}")
    s = config.scaling
    if max(s.ks) > s.rollouts:
        raise ConfigError(f"config key 'scaling.ks' = {list(s.ks)} is not allowed; every K must "
                          f"be <= 'scaling.rollouts' = {s.rollouts}")
    if config.rft.main_cap not in tuple(config.rft.caps):
        raise ConfigError(f"config key 'rft.main_cap' = {config.rft.main_cap} is not allowed; "
                          f"expected one of rft.caps = {list(config.rft.caps)}")
    if config.served.base_url and not config.served.model:
        raise ConfigError("config key 'served.model' = '' is not allowed when served.base_url "
                          "is set; name the served model")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def lm_config(config: ml_collections.ConfigDict, vocab_size: int) -> LMConfig:
    from lib.lm.model import LMConfig   # JAX, loaded only when a model is built

    m = config.lm
    return LMConfig(vocab_size=vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                    num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len)
