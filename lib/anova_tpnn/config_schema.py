"""What an ANOVA-TPNN experiment config may hold, and the checks run before any compute.

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

from lib.anova_tpnn.baselines import MODEL_NAMES
from lib.anova_tpnn.data import NAMES as DATASET_NAMES
from lib.common import config as config_lib
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Ints, Names, Rule, Str

MODES = ("seed", "resample")
BATCH_ORDERS = ("shared", "per_replica")


SCHEMA: dict[str, Rule] = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "datasets": Names(DATASET_NAMES),
    "models": Names(MODEL_NAMES),
    "batch_size": Int(lo=1),
    "epochs": Float(lo=0.0),
    "data.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.val_fraction": Float(lo=0.0, hi=1.0, hi_open=True),
    "data.synth_n": Int(lo=20),
    "data.synth_noise": Float(lo=0.0),
    "data.breast_features": Int(lo=2, hi=30),
    "data.madelon_n": Int(lo=20),
    "data.madelon_features": Int(lo=2),
    "data.madelon_informative": Int(lo=1),
    "data.madelon_redundant": Int(lo=0),
    "model.max_order": Int(lo=1, hi=4),
    "model.num_units": Int(lo=1),
    "model.nam_hidden": Ints(lo=1),
    "model.nbm_hidden": Ints(lo=1),
    "model.nbm_bases": Int(lo=1),
    "model.mlp_hidden": Ints(lo=1),
    "optim.tpnn.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.nam.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.nbm.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.mlp.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.b1": Float(lo=0.0, hi=1.0, hi_open=True),
    "optim.b2": Float(lo=0.0, hi=1.0, hi_open=True),
    "optim.output_penalty": Float(lo=0.0),
    "replicas.num": Int(lo=2),
    "replicas.modes": Names(MODES),
    "replicas.batch_order": Choice(BATCH_ORDERS),
    "replicas.resample_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "ebm.enabled": Bool(),
    "ebm.num_replicas": Int(lo=2),
    "ebm.interactions": Int(lo=0),
    "ebm.outer_bags": Int(lo=1),
    "eval.plots": Bool(),
    "eval.chunk": Int(lo=1),
    "eval.val_every": Int(lo=1),
    "eval.val_every_epochs": Float(lo=0.0),
    "eval.purify_grid": Int(lo=0),
    "eval.plot_components": Int(lo=1, hi=12),
}


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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))


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
