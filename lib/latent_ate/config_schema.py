"""What a latent-ATE experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/latent_ate file states only what
differs, through `config(overrides)`.

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
from lib.common.config import (MESH_SCHEMA, REQUIRED, Bool, Choice, ConfigError, Float, Floats,
    Int, Ints, Key, Names, Str)

DATASETS = ("digits", "fashion_mnist")
AGGREGATIONS = ("median_ci", "median_var")
ESTIMATORS = ("naive", "oracle", "s_linear_latent", "s_mlp_latent", "dml_linear_pixels",
              "dml_mlp_pixels", "dml_linear_latent", "dml_ols_latent", "dml_mlp_logit_latent",
              "dml_lasso_latent", "dml_mlp_latent", "dml_iv_mlp_latent", "irm_mlp_latent",
              "dml_mlp_ae")
PENALTIES = ("cv", "scaled", "fixed")
SETTINGS = ("label", "complex")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"AGGREGATIONS": "lib.latent_ate.dml:AGGREGATIONS",
           "ESTIMATORS": "lib.latent_ate.estimators:ESTIMATORS",
           "PENALTIES": "lib.latent_ate.learners:PENALTIES",
           "SETTINGS": "lib.latent_ate.semisynthetic:SETTINGS"}

# MLP nuisance penalty (learners.mlp). Default: "fixed" at λ = L2_DEFAULT = 1e-6 (the
# official code's scikit-learn alpha = 1e-4 on batches of 200, i.e. practically no
# shrinkage) with early stopping on 20 % of the training fold. The former default "cv"
# (λ from L2_GRID and the stopping checkpoint by CV_FOLDS-fold cross-validation inside each
# training fold, --config.mlp.penalty=cv) shrinks the nuisances and biases the
# partialling-out estimate towards the confounded one (tools/latent_ate_nuisance_study.py;
# NOTES.md). "scaled" uses λ = l2_scale / n_fit; the older tables' "fixed" values λ = 0.3 /
# 0.03 were tuned against the TRUE nuisances (reproduce them with --config.mlp.penalty=fixed
# --config.mlp.l2_outcome=0.3 --config.mlp.l2_propensity=0.03).
L2_GRID = (1e-2, 3e-2, 1e-1, 3e-1, 1.0)
CV_FOLDS = 2
L2_DEFAULT = 1e-6


def _net(prefix: str, steps: int, batch: int, lr: float, latent_dim: int, *,
         channels: tuple | None = None, hidden: tuple | None = None) -> dict[str, Key]:
    """A pre-trained network's keys: the CNN has `channels`, an autoencoder `hidden`."""
    keys = {f"{prefix}.steps": Key(steps, Int(lo=1)), f"{prefix}.batch": Key(batch, Int(lo=1)),
            f"{prefix}.lr": Key(lr, Float(lo=0.0, lo_open=True)),
            f"{prefix}.latent_dim": Key(latent_dim, Int(lo=1))}
    if channels is not None:
        keys[f"{prefix}.channels"] = Key(channels, Ints(lo=1))
    else:
        keys[f"{prefix}.hidden"] = Key(hidden, Ints(lo=1))
    return keys


KEYS: dict[str, Key] = {
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "data.name": Key("fashion_mnist", Choice(DATASETS)),
    "data.path": Key("/usr/share/datasets/fashion-mnist", Str(allow_empty=False)),
    "data.pretrain_size": Key(20000, Int(lo=100)),
    "data.pool_fraction": Key(0.5, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.label_classes": Key((5, 7, 9), Ints(lo=0)),
    "data.pixel_pool": Key(2, Int(lo=1)),
    **_net("pretrain.cnn", 1500, 128, 1e-3, 64, channels=(16, 32)),
    **_net("pretrain.pixel_ae", 1500, 128, 1e-3, 8, hidden=(256,)),
    **_net("pretrain.confounder_ae", 1500, 128, 1e-3, 5, hidden=(32,)),
    "sim.settings": Key(("label", "complex"), Names(SETTINGS)),
    "sim.n": Key(1000, Int(lo=20)),
    "sim.reps": Key(200, Int(lo=2)),
    "sim.theta": Key(2.0, Float()),
    "sim.noise": Key(1.0, Float(lo=0.0, lo_open=True)),
    "sim.gamma": Key(-2.0, Float()),
    "sim.p1": Key(0.7, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "sim.p0": Key(0.3, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "sim.logit_scale": Key(1.0, Float(lo=0.0)),
    "sim.outcome_scale": Key(1.0, Float()),
    "sim.coef_seed": Key(1, Int(lo=0)),
    "dml.n_folds": Key(2, Int(lo=2, hi=20)),
    "dml.n_rep": Key(1, Int(lo=1)),
    "dml.clip": Key(0.01, Float(lo=0.0, hi=0.5, hi_open=True)),
    "dml.aggregation": Key("median_ci", Choice(AGGREGATIONS)),
    "dml.level": Key(0.95, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "dml.ridge_lambdas": Key(tuple(10.0 ** (k / 2 - 2) for k in range(13)), Floats(lo=0.0)),
    "dml.logistic_l2": Key(1.0, Float(lo=0.0)),
    "dml.lasso_alpha": Key(0.01, Float(lo=0.0)),
    "mlp.hidden": Key((32,), Ints(lo=1)),
    "mlp.lr": Key(3e-3, Float(lo=0.0, lo_open=True)),
    "mlp.steps": Key(200, Int(lo=1)),
    "mlp.val_fraction": Key(0.2, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "mlp.eval_every": Key(10, Int(lo=1)),
    "mlp.penalty": Key("fixed", Choice(PENALTIES)),   # see L2_DEFAULT above
    "mlp.l2_grid": Key(L2_GRID, Floats(lo=0.0)),
    "mlp.cv_folds": Key(CV_FOLDS, Int(lo=2, hi=10)),
    "mlp.l2_scale": Key(1.0, Float(lo=0.0)),
    "mlp.l2_outcome": Key(L2_DEFAULT, Float(lo=0.0)),
    "mlp.l2_propensity": Key(L2_DEFAULT, Float(lo=0.0)),
    "mlp.batch_size": Key(0, Int(lo=0)),
    "mlp.epochs": Key(0, Int(lo=0)),
    "mlp.early_stopping": Key(True, Bool()),
    "estimators": Key(REQUIRED, Names(ESTIMATORS)),
    "id.points": Key(2000, Int(lo=10)),
    "id.k": Key(10, Int(lo=3, hi=100)),
    "eval.rep_batch": Key(25, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    "eval.plot_reps": Key(40, Int(lo=1)),
    "eval.target_coverage": Key((91, 99), Ints(lo=0, length=2)),
    "eval.target_bias_fraction": Key(0.1, Float(lo=0.0, lo_open=True)),
    # the treatment is binary in every design: the target is the official pairing (MLP
    # outcome, logistic propensity)
    "eval.target_estimators": Key(("dml_mlp_logit_latent",), Names(ESTIMATORS)),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), MESH_SCHEMA),
}


config = config_lib.config_builder(KEYS, "lib/latent_ate/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))
