"""What an EARTH experiment config may hold, and the checks run before any compute.

Blocks: `datasets` (which series to run), `data` (window, horizons, splits, the folder of
the benchmark files, an optional custom pair of files, the semantic graph), `sim` (the
simulated metapopulation), `models` (EARTH, ablations, baselines), `ablation_datasets` (where the
ablations no_eano / no_gltg / no_xattn run; elsewhere only EARTH and the baselines), `model` (sizes,
diffrax solver/adjoint/step), `optim`, `num_seeds` (independent copies trained side by
side with vmap), `eval`, plus the shared `train` and `mesh` blocks.
"""
from __future__ import annotations

import os

import ml_collections

from lib.common import config as config_lib
from lib.common import paths
from lib.common.config import Bool, Choice, ConfigError, Float, Int, Ints, Names, Optional, Rule, Str
from lib.earth.baselines import BASELINES
from lib.earth.data import NEGATIVE, ROUNDINGS
from lib.earth.eano import ADJOINTS, SOLVERS
from lib.earth.gltg import SELECTIONS
from lib.data import public
from lib.earth.model import VARIANTS

# benchmark name -> (series file, adjacency file) inside data.root
BENCHMARKS = {
    "us_regions": ("region785.txt", "region-adj.txt"),
    "us_states": ("state360.txt", "state-adj-49.txt"),
    "japan": ("japan.txt", "japan-adj.txt"),
    "australia": ("australia-covid.txt", "australia-adj.txt"),
}
DATASETS = ("simulated", *BENCHMARKS, "custom")
MODELS = (*VARIANTS, *BASELINES, "epignn")

SCHEMA: dict[str, Rule] = {
    **config_lib.TRAIN_SCHEMA,
    **config_lib.MESH_SCHEMA,
    "tag": Str(allow_empty=False),
    "datasets": Names(DATASETS),
    "data.root": Str(allow_empty=False),
    "data.custom_series": Optional(Str(allow_empty=False)),
    "data.custom_adjacency": Optional(Str(allow_empty=False)),
    "data.window": Int(lo=2, hi=512),
    "data.negative_counts": Choice(NEGATIVE),
    "data.horizons": Ints(lo=1),
    "data.train_frac": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.val_frac": Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "data.split_rounding": Choice(ROUNDINGS),
    "data.semantic_k": Int(lo=1),
    "data.semantic_select": Choice(SELECTIONS),
    "sim.num_regions": Int(lo=2, hi=500),
    "sim.num_weeks": Int(lo=10),
    "sim.mobility": Float(lo=0.0, hi=1.0),
    "sim.seasonal_amp": Float(lo=0.0, hi=1.0),
    "sim.report_rate": Float(lo=0.0, hi=1.0, lo_open=True),
    "sim.dispersion": Float(lo=0.0, lo_open=True),
    "sim.seed": Int(lo=0),
    "models": Names(MODELS),
    "ablation_datasets": Names(DATASETS, allow_empty=True),
    "model.hidden": Int(lo=1),
    "model.heads": Int(lo=1),
    "model.ar_lags": Int(lo=1),
    "model.alpha": Float(lo=0.0, lo_open=True),
    "model.solver": Choice(tuple(SOLVERS)),
    "model.adjoint": Choice(tuple(ADJOINTS)),
    "model.dt": Float(lo=0.0, lo_open=True),
    "model.baseline_hidden": Int(lo=1),
    "model.epignn_k": Int(lo=1),
    "model.epignn_hid_a": Int(lo=1),
    "model.epignn_layers": Int(lo=1),
    "run.stage_budget_s": Optional(Float(lo=0.0, lo_open=True)),
    "select.enabled": Bool(),
    "select.every_epochs": Int(lo=1),
    "select.patience": Int(lo=1),
    "select.max_epochs": Int(lo=1),
    "optim.lr": Float(lo=0.0, lo_open=True, hi=1.0),
    "optim.weight_decay": Float(lo=0.0),
    "optim.clip_norm": Float(lo=0.0, lo_open=True),
    "optim.batch_size": Int(lo=1),
    "num_seeds": Int(lo=1, hi=64),
    "eval.chunk": Int(lo=1),
    "eval.plots": Bool(),
}


def _check_cross(config: ml_collections.ConfigDict) -> None:
    d, m = config.data, config.model
    if not d.horizons or len(set(d.horizons)) != len(d.horizons):
        raise ConfigError(f"config key 'data.horizons' = {d.horizons!r} is not allowed; expected "
                          "a non-empty sequence of distinct horizons")
    if d.train_frac + d.val_frac >= 1.0:
        raise ConfigError(f"config keys 'data.train_frac' + 'data.val_frac' = "
                          f"{d.train_frac + d.val_frac!r} must be < 1 (a test split is needed)")
    if d.window < m.ar_lags:
        raise ConfigError(f"config key 'model.ar_lags' = {m.ar_lags!r} exceeds 'data.window' = {d.window!r}")
    if m.hidden % m.heads:
        raise ConfigError(f"config key 'model.heads' = {m.heads!r} must divide 'model.hidden' = {m.hidden!r}")
    steps = (d.window - 1) / m.dt
    if abs(steps - round(steps)) > 1e-9:
        raise ConfigError(f"config key 'model.dt' = {m.dt!r} must divide the window span "
                          f"{d.window - 1} (fixed-step solve)")
    if "custom" in config.datasets:
        for key in ("custom_series", "custom_adjacency"):
            if not d[key]:
                raise ConfigError(f"config key 'data.{key}' must name a file when 'custom' is in datasets")


def check_files(config: ml_collections.ConfigDict) -> None:
    """The data files the datasets need exist (run by the binary before any compute; not
    part of `validate`, so configs naming the benchmarks load where they are absent). A
    relative `data.root` is taken from the repository root; the default `data/epidemic` is
    also checked file by file against its pinned sha256 (lib/data/public.py)."""
    d = config.data
    root = paths.resolve(d.root)
    if any(name in BENCHMARKS for name in config.datasets) and root == public.default_dir(
            "epidemic"):
        try:
            public.check("epidemic", root)
        except public.DataError as err:
            raise ConfigError(str(err)) from None
    for name in config.datasets:
        files = [os.path.join(root, f) for f in BENCHMARKS.get(name, ())]
        if name == "custom":
            files = [d.custom_series, d.custom_adjacency]
        for f in files:
            if not os.path.isfile(f):
                raise ConfigError(f"dataset {name!r} needs the file {f!r}, which does not exist; "
                                  "set --config.data.root (benchmarks) or data.custom_* (custom)")


def validate(config: ml_collections.ConfigDict) -> ml_collections.ConfigDict:
    """`ConfigError` naming key, value and what is allowed; returns the config unchanged."""
    return config_lib.validate(config, SCHEMA, checks=(_check_cross,))
