"""What an lm experiment config may hold, and the checks run before any compute.

Blocks: `task` (synthetic addition), `tokenizer`, `model` (`lib.lm.model.LMConfig`
fields), `optim`, `train` (shared block + `batch_size`), `eval`, `mesh`, `tag`, `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (MESH_SCHEMA, TRAIN_SCHEMA, Bool, Choice, ConfigError, Float, Int,
    Rule, Str)
from lib.lm import tasks
from lib.lm.model import LMConfig


def _key(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def model_rules(prefix: str = "", *, min_len: int = 8) -> dict[str, Rule]:
    """Schema rules for a `model` block of `LMConfig` fields under `prefix` (e.g.
    "editor" -> "editor.model.d_model"); `min_len` bounds `model.max_len` from below."""
    return {_key(prefix, k): r for k, r in {
        "model.d_model": Int(lo=8), "model.num_layers": Int(lo=1), "model.num_heads": Int(lo=1),
        "model.d_ff": Int(lo=8), "model.max_len": Int(lo=min_len),
        "model.dtype": Choice(("float32", "bfloat16"))}.items()}


def optim_rules(prefix: str = "") -> dict[str, Rule]:
    """Schema rules for an `optim` block (AdamW with warm-up and clipping) under `prefix`."""
    return {_key(prefix, k): r for k, r in {
        "optim.lr": Float(lo=0.0, lo_open=True), "optim.warmup_steps": Int(lo=0),
        "optim.weight_decay": Float(lo=0.0), "optim.grad_clip": Float(lo=0.0, lo_open=True)}.items()}


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "task.digits": Int(lo=1, hi=64),
    "task.pad": Bool(),
    "task.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "task.num_train": Int(lo=1),
    "tokenizer.bpe_merges": Int(lo=0),
    **model_rules(min_len=8),
    **optim_rules(),
    **TRAIN_SCHEMA,
    "train.batch_size": Int(lo=1),
    "eval.num_eval": Int(lo=1),
    "eval.batch_size": Int(lo=1),
    "eval.target_exact_match": Float(lo=0.0, hi=1.0),
    "eval.plots": Bool(),
    **MESH_SCHEMA,
}


def example_length(config: ml_collections.ConfigDict) -> int:
    """Tokens of the longest addition conversation (byte tokens: an upper bound with BPE)."""
    d = config.task.digits
    p = tasks.Problem(10 ** d - 1, 10 ** d - 1)
    text = tasks.prompt_text(p, d, True) + tasks.solution_text(p, d)
    return len(text.encode()) + 4   # role tags and <|end|> tokens


def _check_cross(config: ml_collections.ConfigDict) -> None:
    m = config.model
    if m.d_model % m.num_heads:
        raise ConfigError(f"config key 'model.d_model' = {m.d_model} is not allowed; it must be "
                          f"divisible by 'model.num_heads' = {m.num_heads}")
    need = example_length(config)
    if need > m.max_len:
        raise ConfigError(f"config key 'model.max_len' = {m.max_len} is not allowed; "
                          f"{config.task.digits}-digit addition conversations need {need} tokens")
    if config.task.num_train < config.train.batch_size:
        raise ConfigError(f"config key 'task.num_train' = {config.task.num_train} is not allowed; "
                          f"it must be >= 'train.batch_size' = {config.train.batch_size}")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


def model_config(config: ml_collections.ConfigDict, vocab_size: int) -> LMConfig:
    m = config.model
    return LMConfig(vocab_size=vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                    num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len,
                    dtype=m.dtype)

