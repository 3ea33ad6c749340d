"""What a latent-ATE experiment config may hold, and the checks run before any compute.

Blocks: `data` (image set, pre-training/pool split, the label classes), `pretrain` (the
three networks: cnn, pixel_ae, confounder_ae), `sim` (settings, n, replications, the
designs' parameters), `dml` (folds, repeated splits, clipping, linear learners' penalties),
`mlp` (neural nuisances: architecture, Adam, and how the L2 penalty and the stopping
time are chosen — `penalty` "cv" over `l2_grid` with `cv_folds` inner folds, "scaled"
λ = l2_scale / n_fit, or "fixed" l2_outcome / l2_propensity; full-batch `steps`, or
`batch_size` > 0 minibatches for `epochs` passes; `early_stopping`), `estimators`, `id` (intrinsic dimension), `eval`, `mesh`, plus
`tag` and `seed`.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (MESH_SCHEMA, Bool, Choice, ConfigError, Float, Floats, Int, Ints,
    Names, Rule, Str)
from lib.latent_ate.dml import AGGREGATIONS
from lib.latent_ate.estimators import ESTIMATORS
from lib.latent_ate.learners import PENALTIES
from lib.latent_ate.semisynthetic import SETTINGS

DATASETS = ("digits", "fashion_mnist")


def _net(prefix: str, ae: bool) -> dict[str, Rule]:
    rules = {f"{prefix}.steps": Int(lo=1), f"{prefix}.batch": Int(lo=1),
             f"{prefix}.lr": Float(lo=0.0, lo_open=True), f"{prefix}.latent_dim": Int(lo=1)}
    rules[f"{prefix}.hidden" if ae else f"{prefix}.channels"] = Ints(lo=1)
    return rules


SCHEMA: dict[str, Rule] = {
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "data.name": Choice(DATASETS),
    "data.path": Str(allow_empty=False),
    "data.pretrain_size": Int(lo=100),
    "data.pool_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.label_classes": Ints(lo=0),
    "data.pixel_pool": Int(lo=1),
    **_net("pretrain.cnn", False),
    **_net("pretrain.pixel_ae", True),
    **_net("pretrain.confounder_ae", True),
    "sim.settings": Names(SETTINGS),
    "sim.n": Int(lo=20),
    "sim.reps": Int(lo=2),
    "sim.theta": Float(),
    "sim.noise": Float(lo=0.0, lo_open=True),
    "sim.gamma": Float(),
    "sim.p1": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "sim.p0": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "sim.logit_scale": Float(lo=0.0),
    "sim.outcome_scale": Float(),
    "sim.coef_seed": Int(lo=0),
    "dml.n_folds": Int(lo=2, hi=20),
    "dml.n_rep": Int(lo=1),
    "dml.clip": Float(lo=0.0, hi=0.5, hi_open=True),
    "dml.aggregation": Choice(AGGREGATIONS),
    "dml.level": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "dml.ridge_lambdas": Floats(lo=0.0),
    "dml.logistic_l2": Float(lo=0.0),
    "dml.lasso_alpha": Float(lo=0.0),
    "mlp.hidden": Ints(lo=1),
    "mlp.lr": Float(lo=0.0, lo_open=True),
    "mlp.steps": Int(lo=1),
    "mlp.val_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "mlp.penalty": Choice(PENALTIES),
    "mlp.l2_grid": Floats(lo=0.0),
    "mlp.cv_folds": Int(lo=2, hi=10),
    "mlp.l2_scale": Float(lo=0.0),
    "mlp.l2_outcome": Float(lo=0.0),
    "mlp.l2_propensity": Float(lo=0.0),
    "mlp.eval_every": Int(lo=1),
    "mlp.batch_size": Int(lo=0),
    "mlp.epochs": Int(lo=0),
    "mlp.early_stopping": Bool(),
    "estimators": Names(tuple(ESTIMATORS)),
    "id.points": Int(lo=10),
    "id.k": Int(lo=3, hi=100),
    "eval.rep_batch": Int(lo=1),
    "eval.plots": Bool(),
    "eval.plot_reps": Int(lo=1),
    "eval.target_coverage": Ints(lo=0, length=2),
    "eval.target_bias_fraction": Float(lo=0.0, lo_open=True),
    "eval.target_estimators": Names(tuple(ESTIMATORS)),
    **MESH_SCHEMA,
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
    classes = tuple(config.data.label_classes)
    if not classes or len(set(classes)) != len(classes) or max(classes) > 9:
        raise ConfigError(f"config key 'data.label_classes' = {config.data.label_classes!r} "
                          "is not allowed; expected distinct class ids 0..9, at least one")
    if config.data.name == "digits" and config.sim.n > 0.9 * 1797 * config.data.pool_fraction:
        raise ConfigError(f"config key 'sim.n' = {config.sim.n} is not allowed; the digits pool "
                          f"holds ~{int(1797 * config.data.pool_fraction)} images (data."
                          "pool_fraction), keep n below 90% of it")
    if config.data.name == "fashion_mnist" and config.sim.n > 9000:
        raise ConfigError(f"config key 'sim.n' = {config.sim.n} is not allowed; the "
                          "Fashion-MNIST causal pool holds 10,000 images (use n <= 9000)")
    if config.sim.n // config.dml.n_folds < 10:
        raise ConfigError(f"config key 'dml.n_folds' = {config.dml.n_folds} is not allowed "
                          f"with sim.n = {config.sim.n}: folds need >= 10 rows")
    side = 28 if config.data.name == "fashion_mnist" else 8
    if side % config.data.pixel_pool:
        raise ConfigError(f"config key 'data.pixel_pool' = {config.data.pixel_pool} is not "
                          f"allowed; it must divide the image side {side}")
    lo_hi = tuple(config.eval.target_coverage)
    if lo_hi[0] >= lo_hi[1] or lo_hi[1] > 100:
        raise ConfigError(f"config key 'eval.target_coverage' = {lo_hi!r} is not allowed; "
                          "expected (low, high) percentages with low < high <= 100")
    if config.pretrain.confounder_ae.latent_dim > config.pretrain.cnn.latent_dim:
        raise ConfigError("config key 'pretrain.confounder_ae.latent_dim' must not exceed "
                          "'pretrain.cnn.latent_dim' (the code compresses the features)")
    m = config.mlp
    if m.get("batch_size", 0) > 0 and m.get("epochs", 0) < 1:
        raise ConfigError(f"config key 'mlp.epochs' = {m.get('epochs', 0)} is not allowed with "
                          f"mlp.batch_size = {m.batch_size}: minibatch training needs >= 1 epoch")
    if not m.get("early_stopping", True) and m.penalty == "cv":
        raise ConfigError("config key 'mlp.early_stopping' = False is not allowed with "
                          "mlp.penalty = 'cv' (CV chooses the stopping time); use 'fixed' or "
                          "'scaled'")
    missing = [e for e in config.eval.target_estimators if e not in config.estimators]
    if missing:
        raise ConfigError(f"config key 'eval.target_estimators' = "
                          f"{tuple(config.eval.target_estimators)!r} is not allowed; {missing} "
                          "are not in 'estimators'")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
