"""What an EARTH experiment config may hold, and the checks run before any compute.
Every key's default sits with its rule in `KEYS`; a configs/earth file states only what
differs, through `config(overrides)`.

Blocks: `datasets` (which series to run), `data` (window, horizons, splits, the folder of
the benchmark files, an optional custom pair of files, the semantic graph), `sim` (the
simulated metapopulation), `models` (EARTH, ablations, baselines), `ablation_datasets` (where the
ablations no_eano / no_gltg / no_xattn run; elsewhere only EARTH and the baselines), `model` (sizes,
EANO dynamics, diffrax solver/adjoint/step), `optim`, `num_seeds` (independent copies trained
side by side with vmap), `eval`, plus the shared `train` and `mesh` blocks.
"""
from __future__ import annotations

import os

import ml_collections

from lib.common import config as config_lib
from lib.common import paths
from lib.common.config import (REQUIRED, Bool, Choice, ConfigError, Float, Int, Ints, Key, Names,
                               Optional, Str)
from lib.data import public

VARIANTS = ("earth", "no_eano", "no_gltg", "no_xattn")
BASELINES = ("persistence", "linear_ar", "gru", "gcn_gru")
NEGATIVE = ("error", "keep", "clip")
ROUNDINGS = ("round", "floor")
SELECTIONS = ("most", "least")
SOLVERS = ("rk4", "euler", "heun", "midpoint", "tsit5", "dopri5")
DYNAMICS = ("official", "sirs")
ADJOINTS = ("recursive_checkpoint", "backsolve", "direct")
# Names defined in modules that load JAX or numpy, copied so that config files load
# without them (tests/common/test_config_imports.py checks each copy against its source).
MIRRORS = {"VARIANTS": "lib.earth.model:VARIANTS", "BASELINES": "lib.earth.baselines:BASELINES",
           "NEGATIVE": "lib.earth.data:NEGATIVE", "ROUNDINGS": "lib.earth.data:ROUNDINGS",
           "SELECTIONS": "lib.earth.gltg:SELECTIONS", "SOLVERS": "lib.earth.eano:SOLVERS",
           "ADJOINTS": "lib.earth.eano:ADJOINTS", "DYNAMICS": "lib.earth.eano:DYNAMICS"}

# benchmark name -> (series file, adjacency file) inside data.root
BENCHMARKS = {
    "us_regions": ("region785.txt", "region-adj.txt"),
    "us_states": ("state360.txt", "state-adj-49.txt"),
    "japan": ("japan.txt", "japan-adj.txt"),
    "australia": ("australia-covid.txt", "australia-adj.txt"),
}
DATASETS = ("simulated", *BENCHMARKS, "custom")
MODELS = (*VARIANTS, *BASELINES, "epignn")
ALL_MODELS = ("earth", "no_eano", "no_gltg", "no_xattn", "persistence", "linear_ar", "gru",
              "gcn_gru")

KEYS: dict[str, Key] = {
    **config_lib.keys_of_block(
        "train", config_lib.train_block(200, log_every=50, checkpoint_every=200),
        config_lib.TRAIN_SCHEMA),
    **config_lib.keys_of_block("mesh", config_lib.mesh_block(), config_lib.MESH_SCHEMA),
    "tag": Key(REQUIRED, Str(allow_empty=False)),
    "datasets": Key(("simulated", "australia", "us_regions", "us_states", "japan"),
                    Names(DATASETS)),
    "data.root": Key("data/epidemic", Str(allow_empty=False)),
    "data.custom_series": Key(None, Optional(Str(allow_empty=False))),
    "data.custom_adjacency": Key(None, Optional(Str(allow_empty=False))),
    "data.window": Key(20, Int(lo=2, hi=512)),
    "data.negative_counts": Key("keep", Choice(NEGATIVE)),
    "data.horizons": Key((5, 10, 15), Ints(lo=1)),
    "data.train_frac": Key(0.5, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.val_frac": Key(0.3, Float(lo=0.0, hi=1.0, lo_open=True, hi_open=True)),
    "data.split_rounding": Key("round", Choice(ROUNDINGS)),
    "data.semantic_k": Key(5, Int(lo=1)),
    "data.semantic_select": Key("most", Choice(SELECTIONS)),
    "sim.num_regions": Key(10, Int(lo=2, hi=500)),
    "sim.num_weeks": Key(520, Int(lo=10)),
    "sim.mobility": Key(0.1, Float(lo=0.0, hi=1.0)),
    "sim.seasonal_amp": Key(0.35, Float(lo=0.0, hi=1.0)),
    "sim.report_rate": Key(0.02, Float(lo=0.0, hi=1.0, lo_open=True)),
    "sim.dispersion": Key(20.0, Float(lo=0.0, lo_open=True)),
    "sim.seed": Key(0, Int(lo=0)),
    "models": Key(ALL_MODELS, Names(MODELS)),
    "ablation_datasets": Key(("simulated",), Names(DATASETS, allow_empty=True)),
    "model.hidden": Key(12, Int(lo=1)),
    "model.heads": Key(4, Int(lo=1)),
    "model.ar_lags": Key(4, Int(lo=1)),
    "model.alpha": Key(3.0, Float(lo=0.0, lo_open=True)),
    # EANO's vector field: the released code's (full d × d gates on every latent) or the
    # diagonal-gate + explicit SIRS form (lib/earth/eano.py); runs before the key were "sirs"
    "model.dynamics": Key("official", Choice(DYNAMICS), before="sirs"),
    "model.solver": Key("midpoint", Choice(SOLVERS)),
    "model.adjoint": Key("recursive_checkpoint", Choice(ADJOINTS)),
    "model.dt": Key(1.0, Float(lo=0.0, lo_open=True)),
    "model.baseline_hidden": Key(12, Int(lo=1)),
    "model.epignn_k": Key(8, Int(lo=1)),
    "model.epignn_hid_a": Key(64, Int(lo=1)),
    "model.epignn_layers": Key(2, Int(lo=1)),
    # run-time only: wall-clock cap per trained stage
    "run.stage_budget_s": Key(None, Optional(Float(lo=0.0, lo_open=True))),
    "select.enabled": Key(False, Bool()),
    "select.every_epochs": Key(1, Int(lo=1)),
    "select.patience": Key(1, Int(lo=1)),
    "select.max_epochs": Key(1, Int(lo=1)),
    "optim.lr": Key(5e-3, Float(lo=0.0, lo_open=True, hi=1.0)),
    "optim.weight_decay": Key(5e-4, Float(lo=0.0)),
    "optim.clip": Key(1.0, Float(lo=0.0, lo_open=True), was="optim.clip_norm"),
    "optim.batch_size": Key(16, Int(lo=1)),
    "num_seeds": Key(1, Int(lo=1, hi=64)),
    "eval.chunk": Key(64, Int(lo=1)),
    "eval.plots": Key(True, Bool()),
}
RENAMED_KEYS = config_lib.renamed_of(KEYS)   # {old name: new name}, for wd.prepare


config = config_lib.config_builder(KEYS, "lib/earth/config_schema.py")


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
    return config_lib.validate(config, config_lib.rules_of(KEYS),
                               checks=(_check_cross,))
