"""The lm config: every key's default with its rule (`KEYS`; configs/lm states only what
differs, through `config(overrides)`), and the checks run before any compute.

Blocks: `task` (synthetic addition), `tokenizer`, `model` (`lib.lm.model.LMConfig`
fields), `optim`, `train` (shared block + `batch_size`), `eval`, `mesh`, `tag`, `seed`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Int, Key, Rule, Str)

if TYPE_CHECKING:
    from lib.lm.model import LMConfig


def _key(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def model_keys(prefix: str = "", *, min_len: int = 8, **defaults) -> dict[str, Key]:
    """Keys of a `model` block of `LMConfig` fields under `prefix` (e.g. "editor" ->
    "editor.model.d_model"): the sizes are `REQUIRED` unless given in `defaults`, `dtype`
    defaults to float32; `min_len` bounds `model.max_len` from below."""
    rules = {"d_model": Int(lo=8), "num_layers": Int(lo=1), "num_heads": Int(lo=1),
             "d_ff": Int(lo=8), "max_len": Int(lo=min_len),
             "dtype": Choice(("float32", "bfloat16"))}
    defaults = {"dtype": "float32"} | defaults
    return {_key(prefix, f"model.{k}"): Key(defaults.get(k, REQUIRED), r) for k, r in rules.items()}


def model_rules(prefix: str = "", *, min_len: int = 8) -> dict[str, Rule]:
    """The rules of `model_keys(prefix, min_len=min_len)`."""
    return config_lib.rules_of(model_keys(prefix, min_len=min_len))


def optim_keys(prefix: str = "", **defaults) -> dict[str, Key]:
    """Keys of an `optim` block (AdamW with warm-up and clipping) under `prefix`: `lr` and
    `warmup` (steps) are `REQUIRED` unless given, weight decay 0.01 and `clip` (global norm)
    at 1.0; `warmup` and `clip` were called `warmup_steps` and `grad_clip`."""
    rules = {"lr": Float(lo=0.0, lo_open=True), "warmup": Int(lo=0),
             "weight_decay": Float(lo=0.0), "clip": Float(lo=0.0, lo_open=True)}
    was = {"warmup": "warmup_steps", "clip": "grad_clip"}
    defaults = {"weight_decay": 0.01, "clip": 1.0} | defaults
    return {_key(prefix, f"optim.{k}"): Key(
        defaults.get(k, REQUIRED), r, was=_key(prefix, f"optim.{was[k]}") if k in was else None)
        for k, r in rules.items()}


def optim_rules(prefix: str = "") -> dict[str, Rule]:
    """The rules of `optim_keys(prefix)`."""
    return config_lib.rules_of(optim_keys(prefix))


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "task.digits": Key(REQUIRED, Int(lo=1, hi=64)),
    "task.pad": Key(True, Bool()),
    "task.test_fraction": Key(0.1, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "task.num_train": Key(REQUIRED, Int(lo=1)),
    "tokenizer.bpe_merges": Key(0, Int(lo=0)),
    "tokenizer.bpe_texts": Key(20000, Int(lo=1), before=20000),   # conversations BPE trains on
    **model_keys(min_len=8),
    **optim_keys(),
    **config_lib.keys_of_block(
        "train", config_lib.train_block(REQUIRED, log_every=REQUIRED, checkpoint_every=REQUIRED),
        config_lib.TRAIN_SCHEMA),
    "train.batch_size": Key(REQUIRED, Int(lo=1)),
    "eval.num_eval": Key(REQUIRED, Int(lo=1)),
    "eval.batch_size": Key(REQUIRED, Int(lo=1)),
    "eval.target_exact_match": Key(0.95, Float(lo=0.0, hi=1.0)),
    "eval.plots": Key(True, Bool()),
    "eval.extra_tokens": Key(2, Int(lo=0), before=2),   # generated beyond the answer's length
    "eval.wrong_examples": Key(10, Int(lo=0), before=10),   # kept in results.json
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}


RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare
config = config_lib.config_builder(KEYS, "lib/lm/config_schema.py")


def example_length(config: ml_collections.ConfigDict) -> int:
    """Tokens of the longest addition conversation (byte tokens: an upper bound with BPE)."""
    from lib.lm import tasks   # numpy, loaded only when a config is checked

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
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))


def model_config(config: ml_collections.ConfigDict, vocab_size: int) -> LMConfig:
    from lib.lm.model import LMConfig   # JAX, loaded only when a model is built

    m = config.model
    return LMConfig(vocab_size=vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                    num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len,
                    dtype=m.dtype)

