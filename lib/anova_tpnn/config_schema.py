"""What an ANOVA-TPNN experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/anova_tpnn file states only what
differs, through `config(overrides)`.

Blocks: `datasets`, `models` (names), `batch_size`, `epochs` (0: the step budget
`train.num_steps`; > 0: that many passes over each data set's training rows), `data` (sizes, test and validation fractions),
`model` (architectures), `optim` (Adam betas, `optim.<model>.lr` per model, output penalty),
`replicas` (how many models are trained at once with vmap, and whether they differ by seed
or by resample), `ebm` (the optional interpretML comparison), `eval` (plots, chunking, how
often the validation loss is evaluated for best-on-validation selection, in steps or
epochs; `purify_grid`, the M of the purified-component scores, 0 = off), plus the shared
`train` and `mesh` blocks.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names, Str

MODEL_NAMES = ("tpnn", "nam", "nbm", "mlp")
DATASET_NAMES = ("synth_reg", "synth_clf", "diabetes", "breast_cancer", "madelon")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"MODEL_NAMES": "lib.anova_tpnn.baselines:MODEL_NAMES",
           "DATASET_NAMES": "lib.anova_tpnn.data:NAMES"}
MODES = ("seed", "resample")
BATCH_ORDERS = ("shared", "per_replica")
ALL_DATASETS = ("synth_reg", "synth_clf", "diabetes", "breast_cancer", "madelon")


KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(700, log_every=50, checkpoint_every=500),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "datasets": Key(ALL_DATASETS, Names(DATASET_NAMES)),
    "models": Key(("tpnn", "nam", "nbm", "mlp"), Names(MODEL_NAMES)),
    "batch_size": Key(128, Int(lo=1)),
    "epochs": Key(0.0, Float(lo=0.0)),
    # 20% test, then 12.5% of the rest for validation (≈ 70/10/20, the official code's)
    "data.test_fraction": Key(0.2, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.val_fraction": Key(0.125, Float(lo=0.0, hi=1.0, hi_open=True)),
    "data.synth_n": Key(2000, Int(lo=20)),
    "data.synth_noise": Key(0.5, Float(lo=0.0)),
    "data.breast_features": Key(10, Int(lo=2, hi=30)),
    "data.madelon_n": Key(1000, Int(lo=20)),
    "data.madelon_features": Key(14, Int(lo=2)),
    "data.madelon_informative": Key(5, Int(lo=1)),
    "data.madelon_redundant": Key(2, Int(lo=0)),
    "model.max_order": Key(2, Int(lo=1, hi=4)),
    "model.num_units": Key(10, Int(lo=1)),
    "model.nam_hidden": Key((32, 16), Ints(lo=1)),
    "model.nbm_hidden": Key((32, 16), Ints(lo=1)),
    "model.nbm_bases": Key(32, Int(lo=1)),
    "model.mlp_hidden": Key((128, 64), Ints(lo=1)),
    "optim.tpnn.lr": Key(1e-2, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.nam.lr": Key(3e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.nbm.lr": Key(3e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.mlp.lr": Key(1e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.b1": Key(0.95, Float(lo=0.0, hi=1.0, hi_open=True)),
    "optim.b2": Key(0.998, Float(lo=0.0, hi=1.0, hi_open=True)),
    "optim.output_penalty": Key(0.0, Float(lo=0.0)),
    "replicas.num": Key(10, Int(lo=2)),
    "replicas.modes": Key(("seed", "resample"), Names(MODES)),
    "replicas.resample_fraction": Key(0.8, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "replicas.batch_order": Key("shared", Choice(BATCH_ORDERS)),
    "ebm.enabled": Key(True, Bool()),
    "ebm.num_replicas": Key(5, Int(lo=2)),
    "ebm.interactions": Key(10, Int(lo=0)),
    "ebm.outer_bags": Key(8, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    "eval.chunk": Key(512, Int(lo=1)),
    "eval.plot_components": Key(4, Int(lo=1, hi=12)),
    "eval.val_every": Key(25, Int(lo=1)),
    "eval.val_every_epochs": Key(0.0, Float(lo=0.0)),
    "eval.purify_grid": Key(31, Int(lo=0)),
}


config = config_lib.config_builder(KEYS, "lib/anova_tpnn/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    d = config.data
    if d.madelon_informative + d.madelon_redundant > d.madelon_features:
        raise ConfigError(
            f"data.madelon_informative + data.madelon_redundant = "
            f"{d.madelon_informative + d.madelon_redundant} exceeds data.madelon_features = "
            f"{d.madelon_features}")
    if (config.data.val_fraction > 0 and config.epochs == 0
            and config.eval.val_every > config.train.num_steps):
        raise ConfigError(f"config key 'eval.val_every' = {config.eval.val_every!r} exceeds "
                          f"train.num_steps = {config.train.num_steps} (the validation loss "
                          "would be evaluated only at the last step)")
    if config.ebm.num_replicas > config.replicas.num:
        raise ConfigError(f"config key 'ebm.num_replicas' = {config.ebm.num_replicas!r} exceeds "
                          f"replicas.num = {config.replicas.num} (EBM replicas reuse the "
                          "replicas' resamples)")
    if "tpnn" not in config.models:
        raise ConfigError(f"config key 'models' = {tuple(config.models)!r} must include 'tpnn' "
                          "(every comparison is against ANOVA-TPNN)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged.
    (The interaction order against each data set's feature count is checked when the data
    are loaded, before any training: `lib/anova_tpnn/runs.py::load_datasets`.)"""
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))


def check_purify(config: ml_collections.ConfigDict) -> None:
    """ConfigError when purified scores are asked for with interactions above order 2
    (`lib.anova_tpnn.purify` covers mains and pairs). Called after the data sets are
    loaded (their feature-count check comes first) and before any training."""
    if config.eval.purify_grid > 0 and config.model.max_order > 2:
        raise ConfigError(f"config key 'eval.purify_grid' = {config.eval.purify_grid} needs "
                          f"model.max_order <= 2 (purification covers mains and pairs), got "
                          f"{config.model.max_order}; set eval.purify_grid = 0")


def optional_modules(config: ml_collections.ConfigDict) -> list[tuple[str, str, str]]:
    """[(module, extra, what needs it)] for `lib.common.extras.require`."""
    return [("interpret", "compare", "ebm.enabled = True")] if config.ebm.enabled else []
