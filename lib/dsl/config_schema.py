"""What a DSL experiment config may hold, and the checks run before any compute.

Blocks: `datasets`, `data` (splits — `val_fraction` > 0 holds out training rows for
best-validation selection —, low-data fractions, preprocessing, generator sizes),
`model` (the DSL approximator: modes, grid, networks, field-line tracing, solver options),
`mlp` (the matched-parameter baseline), `optim`, `toy` (the 2-D field-line / eigenfunction
demo), `eval`, plus the shared `train` and `mesh` blocks.
"""
from __future__ import annotations

import ml_collections

from lib.common import config as config_lib
from lib.common.config import (MESH_SCHEMA, TRAIN_SCHEMA, Bool, Choice, ConfigError, Float,
                               Floats, Int, Ints, Names, Rule, Str)
from lib.dsl import field_lines, sturm_liouville
from lib.dsl.data import DATASETS
from lib.dsl.model import AMPLITUDES
from lib.nn.mlp import ACTIVATIONS

SCHEMA: dict[str, Rule] = {
    **TRAIN_SCHEMA, **MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "seed": Int(lo=0),
    "datasets": Names(tuple(d for d in DATASETS if d != "moons"), allow_empty=True),
    "models": Names(("dsl", "mlp")),
    "data.test_fraction": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.val_fraction": Float(lo=0.0, hi=1.0, hi_open=True),
    "data.fractions": Floats(lo=0.0, hi=1.0, lo_open=True, increasing=True),
    "data.num_seeds": Int(lo=1),
    "data.min_per_class": Int(lo=1),
    "data.input_radius": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.clip_radius": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.fashion_path": Str(allow_empty=False),
    "data.fashion_pca": Int(lo=0),
    "data.fashion_train": Int(lo=10),
    "data.fashion_test": Int(lo=10),
    "data.mc_samples": Int(lo=20),
    "data.mc_features": Int(lo=2),
    "data.mc_informative": Int(lo=1),
    "data.mc_redundant": Int(lo=0),
    "data.mc_classes": Int(lo=2),
    "data.mc_class_sep": Float(lo=0.0, lo_open=True),
    "data.moons_samples": Int(lo=20),
    "data.moons_noise": Float(lo=0.0),
    "model.num_modes": Int(lo=1),
    "model.num_nodes": Int(lo=3),
    "model.field_widths": Ints(lo=1),
    "model.coef_widths": Ints(lo=1),
    "model.amp_widths": Ints(lo=1),
    "model.activation": Choice(tuple(ACTIVATIONS)),
    "model.amplitude": Choice(AMPLITUDES),
    "model.mass": Choice(sturm_liouville.MASS_KINDS),
    "model.grad": Choice(("implicit", "spectral")),
    "model.p_min": Float(lo=0.0, lo_open=True),
    "model.w_min": Float(lo=0.0, lo_open=True),
    "model.domain": Choice(field_lines.DOMAINS),
    "model.radius": Float(lo=0.0, lo_open=True),
    "model.t_max": Float(lo=0.0, lo_open=True),
    "model.ode_steps": Int(lo=1),
    "model.solver": Choice(tuple(field_lines.SOLVERS)),
    "model.normalize": Bool(),
    "mlp.depth": Int(lo=1),
    "mlp.activation": Choice(tuple(ACTIVATIONS)),
    "optim.dsl.lr": Float(lo=0.0, lo_open=True),
    "optim.mlp.lr": Float(lo=0.0, lo_open=True),
    "optim.weight_decay": Float(lo=0.0),
    "optim.clip": Float(lo=0.0),
    "optim.batch_size": Int(lo=1),
    "toy.enabled": Bool(),
    "toy.num_steps": Int(lo=1),
    "toy.grid": Int(lo=4),
    "toy.num_lines": Int(lo=1),
    "eval.chunk": Int(lo=1),
    "eval.plots": Bool(),
    "eval.val_every": Int(lo=0),
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
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
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
