"""What a cl_similarity experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/cl_similarity file states only what
differs, through `config(overrides)`.

Blocks: `parts` (theory and/or ssl), `theory` (free embeddings: full batch, SigLIP bias sweep,
fixed mini-batches), `ssl` (the SimCLR sweep: data sets × batch sizes × VRNS off/on),
`digits`, `fashion_mnist` (data), `augment`, `model`, `probe`, `eval`, `train` (the harness's
logging and checkpoint settings; the number of steps follows from `ssl.epochs`), `mesh`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (
    REQUIRED, Bool, Choice, ConfigError, Float, Floats, Int, Ints, Key, Names, Str)

LOSSES = ("infonce", "simclr", "dcl", "dhel", "siglip", "spectral")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"LOSSES": "lib.cl_similarity.losses:LOSSES"}
PARTS = ("theory", "ssl")
DATASETS = ("digits", "fashion_mnist")
NUM_IMAGES = {"digits": 1797, "fashion_mnist": 70000}


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "parts": Key(("theory", "ssl"), Names(PARTS)),
    "theory.n": Key(REQUIRED, Int(lo=3)),
    "theory.d": Key(REQUIRED, Int(lo=3)),
    "theory.steps": Key(REQUIRED, Int(lo=50)),
    "theory.record_every": Key(50, Int(lo=1)),
    "theory.lr": Key(0.05, Float(lo=0.0, lo_open=True, hi=10.0)),
    "theory.temperature": Key(0.2, Float(lo=0.0, lo_open=True)),
    "theory.siglip_t": Key(10.0, Float(lo=0.0, lo_open=True)),
    "theory.siglip_b": Key(0.0, Float()),
    "theory.siglip_biases": Key((-2.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0), Floats()),
    "theory.batch_sizes": Key(REQUIRED, Ints(lo=2)),
    "theory.minibatch_loss": Key("simclr", Choice(LOSSES)),
    "theory.vrns_weight": Key(30.0, Float(lo=0.0, lo_open=True)),
    "theory.tolerance": Key(0.001, Float(lo=0.0, lo_open=True)),
    "ssl.datasets": Key(("digits", "fashion_mnist"), Names(DATASETS)),
    "ssl.batch_sizes": Key((16, 32, 64, 128, 256, 512), Ints(lo=2)),
    "ssl.epochs": Key(REQUIRED, Int(lo=1)),
    "ssl.loss": Key("simclr", Choice(LOSSES)),
    "ssl.temperature": Key(0.2, Float(lo=0.0, lo_open=True)),
    "ssl.aux_weight": Key(30.0, Float(lo=0.0, lo_open=True)),
    "ssl.optimizer": Key("adam", Choice(("sgd", "adam"))),
    "ssl.lr": Key(0.002, Float(lo=0.0, lo_open=True, hi=10.0)),
    "ssl.lr_scaling": Key("sqrt", Choice(("linear", "sqrt", "none"))),
    "ssl.weight_decay": Key(0.0001, Float(lo=0.0)),
    "ssl.warmup_epochs": Key(1, Int(lo=0)),
    "ssl.test_fraction": Key(0.2, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "digits.num_images": Key(-1, Int(lo=-1)),
    "digits.flip_prob": Key(0.0, Float(lo=0.0, hi=1.0)),
    "fashion_mnist.path": Key("/usr/share/datasets/fashion-mnist", Str(allow_empty=False)),
    "fashion_mnist.num_images": Key(REQUIRED, Int(lo=-1)),
    "fashion_mnist.downsample": Key(REQUIRED, Choice((1, 2, 4))),
    "fashion_mnist.flip_prob": Key(0.5, Float(lo=0.0, hi=1.0)),
    "augment.min_scale": Key(0.3, Float(lo=0.0, hi=1.0, lo_open=True)),
    "augment.jitter_prob": Key(0.8, Float(lo=0.0, hi=1.0)),
    "augment.brightness": Key(0.4, Float(lo=0.0, hi=1.0)),
    "augment.contrast": Key(0.4, Float(lo=0.0, hi=1.0)),
    "augment.noise_std": Key(0.05, Float(lo=0.0)),
    "model.stage_widths": Key(REQUIRED, Ints(lo=1)),
    "model.blocks_per_stage": Key(1, Int(lo=1)),
    "model.head_hidden": Key(REQUIRED, Int(lo=1)),
    "model.proj_dim": Key(REQUIRED, Int(lo=2)),
    "probe.steps": Key(REQUIRED, Int(lo=1)),
    "probe.lr": Key(0.05, Float(lo=0.0, lo_open=True)),
    "probe.weight_decay": Key(0.0001, Float(lo=0.0)),
    "eval.max_pairs": Key(REQUIRED, Int(lo=2)),
    "eval.plots": Key(True, Bool()),
    "train.log_every": Key(50, Int(lo=1)),
    "train.checkpoint_every": Key(1000, Int(lo=1)),
    "train.keep_checkpoints": Key(1, Int(lo=1)),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
}


config = config_lib.config_builder(KEYS, "lib/cl_similarity/config_schema.py")


def num_train(config: ml_collections.ConfigDict, name: str) -> int:
    """Training images of data set `name` after the subset and the split (as images.split)."""
    n = config[name].num_images
    n = NUM_IMAGES[name] if n == -1 else n
    return n - round(config.ssl.test_fraction * n)


def _check_cross(config: ml_collections.ConfigDict) -> None:
    t = config.theory
    if t.d < t.n:
        raise ConfigError(f"config key 'theory.d' = {t.d} is not allowed; the closed forms need "
                          f"d ≥ theory.n = {t.n}")
    for m in t.batch_sizes:
        if t.n % m or m == t.n:
            raise ConfigError(f"config key 'theory.batch_sizes' = {list(t.batch_sizes)} is not "
                              f"allowed; each must divide theory.n = {t.n} and be smaller")
    if t.steps % t.record_every:
        raise ConfigError(f"config key 'theory.steps' = {t.steps} must be a multiple of "
                          f"theory.record_every = {t.record_every}")
    for name in DATASETS:
        n = config[name].num_images
        if n != -1 and not 10 <= n <= NUM_IMAGES[name]:
            raise ConfigError(f"config key '{name}.num_images' = {n} is not allowed; expected -1 "
                              f"(all) or 10..{NUM_IMAGES[name]}")
    for name in config.ssl.datasets:
        big = max(config.ssl.batch_sizes)
        if big > num_train(config, name):
            raise ConfigError(f"config key 'ssl.batch_sizes' = {list(config.ssl.batch_sizes)} is "
                              f"not allowed; {big} exceeds the {num_train(config, name)} "
                              f"training images of {name}")
    if len(config.model.stage_widths) == 0:
        raise ConfigError("config key 'model.stage_widths' must name at least one stage")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS), checks=(_check_cross,))
