"""The config of a dataset request (`configs/pde_data/*.py`): schema, checks, `DatasetSpec`.

A config has three parts: `pde` (a name from `systems.NAMES`), `params` (exactly that
system's `systems.PARAMETERS`) and `data` (the fields of `dataset.DatasetSpec` except
`pde` and `params`). `spec_from_config` validates it with `lib.common.config.validate`, so
a bad key or value is a `ConfigError` (a ValueError) naming it, and then builds the
solver once, so that physical checks (CFL limit, divisibility of the grid by the
downsampling factor) also fail before any compute.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import ml_collections

from lib.common import config as config_lib

if TYPE_CHECKING:
    from lib.pde import dataset

_POSITIVE = config_lib.Float(lo=0, lo_open=True)
_NONNEGATIVE = config_lib.Float(lo=0)

PARAM_RULES: dict[str, config_lib.Rule] = {
    "n": config_lib.Int(lo=8),
    "length": _POSITIVE,
    "viscosity": _NONNEGATIVE,
    "drag": _NONNEGATIVE,
    "forcing_wavenumber": config_lib.Int(lo=0),
    "forcing_scale": config_lib.Float(),
    "max_velocity": _POSITIVE,
    "peak_wavenumber": _POSITIVE,
    "cfl": _POSITIVE,
    "dt": _POSITIVE,
    "n_modes": config_lib.Int(lo=1),
    "diffusivity_u": _NONNEGATIVE,
    "diffusivity_v": _NONNEGATIVE,
    "feed": _NONNEGATIVE,
    "kill": _NONNEGATIVE,
    "n_squares": config_lib.Int(lo=1),
    "n_solitons": config_lib.Int(lo=1),
    "min_speed": _POSITIVE,
    "max_speed": _POSITIVE,
}

DATA_RULES: dict[str, config_lib.Rule] = {
    "warmup_time": _NONNEGATIVE,
    "duration": _POSITIVE,
    "save_every": config_lib.Int(lo=1),
    "space_factor": config_lib.Int(lo=1),
    "n_train": config_lib.Int(lo=1),
    "n_test": config_lib.Int(lo=1),
    "seed": config_lib.Int(lo=0),
    "dtype": config_lib.Choice(("float32", "float64")),
    "chunk_frames": config_lib.Int(lo=1),
}


def schema(pde: str) -> dict[str, config_lib.Rule]:
    """The flat schema of a config for system `pde` (ValueError for an unknown name)."""
    from lib.pde import downsampling, systems   # JAX, loaded only when a config is checked

    systems.check_name(pde)
    rules: dict[str, config_lib.Rule] = {"pde": config_lib.Choice(systems.NAMES)}
    rules |= {f"params.{name}": PARAM_RULES[name] for name in systems.PARAMETERS[pde]}
    rules |= {f"data.{name}": rule for name, rule in DATA_RULES.items()}
    rules["data.downsample"] = config_lib.Choice(tuple(downsampling.DOWNSAMPLERS))
    return rules


def spec_from_config(config: ml_collections.ConfigDict) -> dataset.DatasetSpec:
    """Validate `config` and return its `DatasetSpec` (all checks before any compute)."""
    from lib.pde import dataset   # JAX, loaded only when a config is checked

    config_lib.validate(config, schema(config.pde))
    spec = dataset.DatasetSpec(pde=config.pde, params=config.params.to_dict(), **config.data.to_dict())
    dataset.dataset_metadata(spec)
    return spec
