"""What a cl_similarity experiment config may hold, and the checks run before any compute.

Blocks: `parts` (theory and/or ssl), `theory` (free embeddings: full batch, SigLIP bias sweep,
fixed mini-batches), `ssl` (the SimCLR sweep: data sets × batch sizes × VRNS off/on),
`digits`, `fashion_mnist` (data), `augment`, `model`, `probe`, `eval`, `train` (the harness's
logging and checkpoint settings; the number of steps follows from `ssl.epochs`), `mesh`.
"""
from __future__ import annotations

import ml_collections

from lib.cl_similarity.losses import LOSSES
from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Floats, Int, Ints, Names, Rule, Str

PARTS = ("theory", "ssl")
DATASETS = ("digits", "fashion_mnist")
NUM_IMAGES = {"digits": 1797, "fashion_mnist": 70000}


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "parts": Names(PARTS),
    "theory.n": Int(lo=3),
    "theory.d": Int(lo=3),
    "theory.steps": Int(lo=50),
    "theory.record_every": Int(lo=1),
    "theory.lr": Float(lo=0.0, lo_open=True, hi=10.0),
    "theory.temperature": Float(lo=0.0, lo_open=True),
    "theory.siglip_t": Float(lo=0.0, lo_open=True),
    "theory.siglip_b": Float(),
    "theory.siglip_biases": Floats(),
    "theory.batch_sizes": Ints(lo=2),
    "theory.minibatch_loss": Choice(LOSSES),
    "theory.vrns_weight": Float(lo=0.0, lo_open=True),
    "theory.tolerance": Float(lo=0.0, lo_open=True),
    "ssl.datasets": Names(DATASETS),
    "ssl.batch_sizes": Ints(lo=2),
    "ssl.epochs": Int(lo=1),
    "ssl.loss": Choice(LOSSES),
    "ssl.temperature": Float(lo=0.0, lo_open=True),
    "ssl.aux_weight": Float(lo=0.0, lo_open=True),
    "ssl.optimizer": Choice(("sgd", "adam")),
    "ssl.lr": Float(lo=0.0, lo_open=True, hi=10.0),
    "ssl.lr_scaling": Choice(("linear", "sqrt", "none")),
    "ssl.weight_decay": Float(lo=0.0),
    "ssl.warmup_epochs": Int(lo=0),
    "ssl.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "digits.num_images": Int(lo=-1),
    "digits.flip_prob": Float(lo=0.0, hi=1.0),
    "fashion_mnist.path": Str(allow_empty=False),
    "fashion_mnist.num_images": Int(lo=-1),
    "fashion_mnist.downsample": Choice((1, 2, 4)),
    "fashion_mnist.flip_prob": Float(lo=0.0, hi=1.0),
    "augment.min_scale": Float(lo=0.0, hi=1.0, lo_open=True),
    "augment.jitter_prob": Float(lo=0.0, hi=1.0),
    "augment.brightness": Float(lo=0.0, hi=1.0),
    "augment.contrast": Float(lo=0.0, hi=1.0),
    "augment.noise_std": Float(lo=0.0),
    "model.stage_widths": Ints(lo=1),
    "model.blocks_per_stage": Int(lo=1),
    "model.head_hidden": Int(lo=1),
    "model.proj_dim": Int(lo=2),
    "probe.steps": Int(lo=1),
    "probe.lr": Float(lo=0.0, lo_open=True),
    "probe.weight_decay": Float(lo=0.0),
    "eval.max_pairs": Int(lo=2),
    "eval.plots": Bool(),
    "train.log_every": Int(lo=1),
    "train.checkpoint_every": Int(lo=1),
    "train.keep_checkpoints": Int(lo=1),
    **config_lib.MESH_SCHEMA,
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
