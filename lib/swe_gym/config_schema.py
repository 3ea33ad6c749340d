"""What a swe_gym experiment config may hold, and the checks run before any compute.

Blocks: `data` (generated benchmark), `sandbox` (test-run limits), `agent` (caps),
`search` (baseline), `lm` (workspace LM architecture + policy), `pretrain` (base LM),
`rft` (warm start, expert-iteration rounds, rollouts, caps ablation, fine-tuning), `verifier`, `scaling` (Pass@K / Best@K),
`served` (an optional OpenAI-compatible model evaluated as a ChatPolicy), `eval`, `tag`,
`seed`. `rft.caps` uses 0 for "no cap".
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (Bool, Choice, ConfigError, Float, Int, Ints, Names, Rule, Str)
from lib.lm.model import LMConfig
from lib.swe_gym import mutations

SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "data.num_repos": Int(lo=2),
    "data.num_test_repos": Int(lo=1),
    "data.per_repo": Int(lo=1),
    "data.kinds": Names(mutations.ALL_KINDS),
    "data.themes_per_repo": Int(lo=1, hi=4),
    "data.funcs_per_theme": Int(lo=1, hi=10),
    "data.min_instances": Int(lo=1),
    "sandbox.wall_s": Float(lo=0.0, lo_open=True),
    "sandbox.cpu_s": Int(lo=1),
    "sandbox.memory_mb": Int(lo=64),
    "agent.max_turns": Int(lo=1),
    "agent.max_context": Int(lo=64),
    "agent.loop_window": Int(lo=2),
    "search.max_candidates": Int(lo=1),
    "search.max_turns": Int(lo=2),
    "lm.bpe_merges": Int(lo=0),
    "lm.d_model": Int(lo=8),
    "lm.num_layers": Int(lo=1),
    "lm.num_heads": Int(lo=1),
    "lm.d_ff": Int(lo=8),
    "lm.max_len": Int(lo=64),
    "lm.max_edits": Int(lo=1),
    "lm.max_tokens": Int(lo=8),
    "pretrain.num_examples": Int(lo=8),
    "pretrain.steps": Int(lo=1),
    "pretrain.batch_size": Int(lo=1),
    "pretrain.lr": Float(lo=0.0, lo_open=True),
    "rft.num_train": Int(lo=-1),
    "rft.rollouts": Int(lo=1),
    "rft.temperature": Float(lo=0.0),
    "rft.caps": Ints(lo=0),
    "rft.main_cap": Int(lo=0),
    "rft.epochs": Int(lo=1),
    "rft.min_steps": Int(lo=1),
    "rft.batch_size": Int(lo=1),
    "rft.lr": Float(lo=0.0, lo_open=True),
    "rft.rounds": Int(lo=1),
    "rft.pool": Int(lo=1),
    "rft.warm_start": Bool(),
    "rft.warm_steps": Int(lo=1),
    "verifier.cap_positive": Int(lo=1),
    "verifier.epochs": Int(lo=1),
    "verifier.min_steps": Int(lo=1),
    "verifier.batch_size": Int(lo=1),
    "verifier.lr": Float(lo=0.0, lo_open=True),
    "verifier.max_chars": Int(lo=100),
    "scaling.num_test": Int(lo=-1),
    "scaling.rollouts": Int(lo=1),
    "scaling.ks": Ints(lo=1),
    "scaling.temperature": Float(lo=0.0),
    "scaling.num_subsamples": Int(lo=1),
    "served.base_url": Str(),
    "served.model": Str(),
    "served.tool_mode": Choice(("auto", "native", "text")),
    "served.cache_dir": Str(),
    "served.max_turns": Int(lo=1),
    "eval.plots": Bool(),
    "eval.target_gain": Float(lo=0.0),
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def lm_config(config: ml_collections.ConfigDict, vocab_size: int) -> LMConfig:
    m = config.lm
    return LMConfig(vocab_size=vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                    num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len)
