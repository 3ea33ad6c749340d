"""What a DSL experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/dsl file states only what
differs, through `config(overrides)`.

Blocks: `datasets`, `data` (splits — `val_fraction` > 0 holds out training rows for
best-validation selection —, low-data fractions, preprocessing, generator sizes),
`model` (the DSL approximator: modes, grid, networks, field-line tracing, solver options),
`mlp` (the matched-parameter baseline), `optim`, `toy` (the 2-D field-line / eigenfunction
demo), `eval`, plus the shared `train` and `mesh` blocks.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (MESH_SCHEMA, REQUIRED, TRAIN_SCHEMA, Bool, Choice, ConfigError,
                               Float, Floats, Int, Ints, Key, Names, Str)

DATASETS = ("breast_cancer", "wine", "make_classification", "digits", "fashion_mnist", "moons")
AMPLITUDES = ("entry_slope", "w_norm", "sup_norm")
ACTIVATIONS = ("relu", "tanh", "gelu", "silu", "softplus", "mish")
DOMAINS = ("ball", "box")
SOLVERS = ("tsit5", "heun", "bosh3")
MASS_KINDS = ("lumped", "consistent")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"DATASETS": "lib.dsl.data:DATASETS", "AMPLITUDES": "lib.dsl.model:AMPLITUDES",
           "ACTIVATIONS": "lib.nn.mlp:ACTIVATIONS", "DOMAINS": "lib.dsl.field_lines:DOMAINS",
           "SOLVERS": "lib.dsl.field_lines:SOLVERS",
           "MASS_KINDS": "lib.dsl.sturm_liouville:MASS_KINDS"}

KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(500, log_every=20, checkpoint_every=200), TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "seed": Key(0, Int(lo=0)),
    "datasets": Key(("wine", "breast_cancer", "make_classification", "digits"),
                    Names(tuple(d for d in DATASETS if d != "moons"), allow_empty=True)),
    # a subset trains one model alone (no comparison table)
    "models": Key(("dsl", "mlp"), Names(("dsl", "mlp"))),
    "data.test_fraction": Key(0.3, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.val_fraction": Key(0.0, Float(lo=0.0, hi=1.0, hi_open=True)),
    "data.fractions": Key((0.05, 0.1, 0.25, 1.0),
                          Floats(lo=0.0, hi=1.0, lo_open=True, increasing=True)),
    "data.num_seeds": Key(2, Int(lo=1)),
    "data.min_per_class": Key(2, Int(lo=1)),
    "data.input_radius": Key(0.8, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.clip_radius": Key(0.95, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.fashion_path": Key("/usr/share/datasets/fashion-mnist", Str(allow_empty=False)),
    "data.fashion_pca": Key(32, Int(lo=0)),
    "data.fashion_train": Key(3000, Int(lo=10)),
    "data.fashion_test": Key(1000, Int(lo=10)),
    "data.mc_samples": Key(1000, Int(lo=20)),
    "data.mc_features": Key(40, Int(lo=2)),
    "data.mc_informative": Key(10, Int(lo=1)),
    "data.mc_redundant": Key(10, Int(lo=0)),
    "data.mc_classes": Key(3, Int(lo=2)),
    "data.mc_class_sep": Key(1.0, Float(lo=0.0, lo_open=True)),
    "data.moons_samples": Key(400, Int(lo=20)),
    "data.moons_noise": Key(0.15, Float(lo=0.0)),
    "model.num_modes": Key(10, Int(lo=1)),
    "model.num_nodes": Key(24, Int(lo=3)),
    "model.field_widths": Key((32,), Ints(lo=1)),
    "model.coef_widths": Key((32,), Ints(lo=1)),
    "model.amp_widths": Key((32,), Ints(lo=1)),
    "model.activation": Key("tanh", Choice(ACTIVATIONS)),
    "model.amplitude": Key("entry_slope", Choice(AMPLITUDES)),
    "model.mass": Key("lumped", Choice(MASS_KINDS)),
    "model.grad": Key("spectral", Choice(("implicit", "spectral"))),
    "model.p_min": Key(0.05, Float(lo=0.0, lo_open=True)),
    "model.w_min": Key(0.05, Float(lo=0.0, lo_open=True)),
    "model.domain": Key("ball", Choice(DOMAINS)),
    "model.radius": Key(1.0, Float(lo=0.0, lo_open=True)),
    "model.t_max": Key(2.5, Float(lo=0.0, lo_open=True)),
    "model.ode_steps": Key(6, Int(lo=1)),
    "model.solver": Key("heun", Choice(SOLVERS)),
    "model.normalize": Key(True, Bool()),
    "mlp.depth": Key(2, Int(lo=1)),
    "mlp.activation": Key("relu", Choice(ACTIVATIONS)),
    "optim.dsl.lr": Key(1e-3, Float(lo=0.0, lo_open=True)),
    "optim.mlp.lr": Key(1e-3, Float(lo=0.0, lo_open=True)),
    "optim.weight_decay": Key(1e-4, Float(lo=0.0)),
    "optim.clip": Key(1.0, Float(lo=0.0)),
    "optim.batch_size": Key(32, Int(lo=1)),
    "toy.enabled": Key(True, Bool()),
    "toy.num_steps": Key(400, Int(lo=1)),
    "toy.grid": Key(40, Int(lo=4)),
    "toy.num_lines": Key(12, Int(lo=1)),
    "eval.chunk": Key(256, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
    "eval.val_every": Key(0, Int(lo=0)),
}


config = config_lib.config_builder(KEYS, "lib/dsl/config_schema.py")


def _check_cross(config: ml_collections.ConfigDict) -> None:
    from lib.dsl import sturm_liouville   # JAX, loaded only when a config is checked

    m, d = config.model, config.data
    if m.num_modes > sturm_liouville.max_modes(m.num_nodes):
        raise ConfigError(f"config key 'model.num_modes' = {m.num_modes!r} is not allowed; "
                          f"model.num_nodes = {m.num_nodes} gives "
                          f"{sturm_liouville.max_modes(m.num_nodes)} interior unknowns, so "
                          f"num_modes <= {sturm_liouville.max_modes(m.num_nodes)}")
    if d.mc_informative + d.mc_redundant > d.mc_features:
        raise ConfigError("config keys 'data.mc_informative' + 'data.mc_redundant' = "
                          f"{d.mc_informative + d.mc_redundant} exceed 'data.mc_features' = "
                          f"{d.mc_features}")
    if d.mc_classes * 2 > 2 ** d.mc_informative:
        raise ConfigError(f"config key 'data.mc_classes' = {d.mc_classes} needs "
                          f"mc_classes · 2 clusters <= 2 ** mc_informative = "
                          f"{2 ** d.mc_informative}")
    if d.clip_radius < d.input_radius:
        raise ConfigError(f"config key 'data.clip_radius' = {d.clip_radius} must be >= "
                          f"'data.input_radius' = {d.input_radius}")
    if d.val_fraction > 0 and config.eval.val_every == 0:
        raise ConfigError(f"config key 'data.val_fraction' = {d.val_fraction} needs "
                          "eval.val_every >= 1 (how often the validation loss is checked)")
    if config.eval.val_every > config.train.num_steps:
        raise ConfigError(f"config key 'eval.val_every' = {config.eval.val_every} exceeds "
                          f"train.num_steps = {config.train.num_steps}")
    if not config.datasets and not config.toy.enabled:
        raise ConfigError("config key 'datasets' is empty and toy.enabled is False: nothing to run")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))
