"""The config of a dataset request (`configs/pde_data/*.py`): schema, checks, `DatasetSpec`.

A config has three parts: `pde` (a name from `systems.NAMES`), `params` (exactly that
system's `systems.PARAMETERS`) and `data` (the fields of `dataset.DatasetSpec` except
`pde` and `params`). `spec_from_config` checks it against `schema(pde)` (exact key set,
types, ranges), so a bad key or value is a `SpecError` (a ValueError) naming it, and then
builds the solver once, so that physical checks (CFL limit, divisibility of the grid by the
downsampling factor) also fail before any compute.

The rules (`Number`, `OneOf`) are this module's own, so lib/pde needs nothing of the
harness. Each has `check(key, value)`, so an experiment's schema may include `schema(pde)`
under a prefix; the harness's `config.validate` raises a rule's `SpecError` as its
`ConfigError`.
"""
from __future__ import annotations

import dataclasses
import difflib
from typing import TYPE_CHECKING, Any

import ml_collections

if TYPE_CHECKING:
    from lib.pde import dataset


class SpecError(ValueError):
    """A key or value of a dataset request that the solvers do not accept."""


def _refuse(key: str, value: Any, allowed: str) -> None:
    raise SpecError(f"config key '{key}' = {value!r} is not allowed; expected {allowed}")


@dataclasses.dataclass(frozen=True)
class Number:
    """An int (`integer`; bools rejected) or a real number (ints accepted, bools rejected),
    >= `lo` (> `lo` when `lo_open`) when `lo` is given."""

    integer: bool = False
    lo: float | None = None
    lo_open: bool = False

    def check(self, key: str, value: Any) -> None:
        allowed = "an int" if self.integer else "a float"
        if self.lo is not None:
            allowed += f" {'>' if self.lo_open else '>='} {self.lo}"
        if not isinstance(value, int if self.integer else (int, float)) or isinstance(value, bool):
            _refuse(key, value, allowed)
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            _refuse(key, value, allowed)


@dataclasses.dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values."""

    options: tuple = ()

    def check(self, key: str, value: Any) -> None:
        if value not in self.options:
            _refuse(key, value, f"one of {list(self.options)}")


Rule = Number | OneOf

_POSITIVE = Number(lo=0, lo_open=True)
_NONNEGATIVE = Number(lo=0)


def _int(lo: int) -> Number:
    return Number(integer=True, lo=lo)


PARAM_RULES: dict[str, Rule] = {
    "n": _int(8),
    "length": _POSITIVE,
    "viscosity": _NONNEGATIVE,
    "drag": _NONNEGATIVE,
    "forcing_wavenumber": _int(0),
    "forcing_scale": Number(),
    "max_velocity": _POSITIVE,
    "peak_wavenumber": _POSITIVE,
    "cfl": _POSITIVE,
    "dt": _POSITIVE,
    "n_modes": _int(1),
    "diffusivity_u": _NONNEGATIVE,
    "diffusivity_v": _NONNEGATIVE,
    "feed": _NONNEGATIVE,
    "kill": _NONNEGATIVE,
    "n_squares": _int(1),
    "n_solitons": _int(1),
    "min_speed": _POSITIVE,
    "max_speed": _POSITIVE,
}

DATA_RULES: dict[str, Rule] = {
    "warmup_time": _NONNEGATIVE,
    "duration": _POSITIVE,
    "save_every": _int(1),
    "space_factor": _int(1),
    "n_train": _int(1),
    "n_test": _int(1),
    "seed": _int(0),
    "dtype": OneOf(("float32", "float64")),
    "chunk_frames": _int(1),
}


def schema(pde: str) -> dict[str, Rule]:
    """The flat schema of a config for system `pde` (ValueError for an unknown name)."""
    from lib.pde import downsampling, systems   # JAX, loaded only when a config is checked

    systems.check_name(pde)
    rules: dict[str, Rule] = {"pde": OneOf(systems.NAMES)}
    rules |= {f"params.{name}": PARAM_RULES[name] for name in systems.PARAMETERS[pde]}
    rules |= {f"data.{name}": rule for name, rule in DATA_RULES.items()}
    rules["data.downsample"] = OneOf(tuple(downsampling.DOWNSAMPLERS))
    return rules


def _flatten(tree: ml_collections.ConfigDict | dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, (ml_collections.ConfigDict, dict)):
            out |= _flatten(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def check(config: ml_collections.ConfigDict, rules: dict[str, Rule]) -> None:
    """`SpecError` unless `config` has exactly the keys of `rules` and each value passes."""
    flat = _flatten(config)
    unknown = sorted(set(flat) - set(rules))
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, list(rules), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise SpecError(f"unknown config key '{key}' (= {flat[key]!r}){hint}; "
                        f"allowed keys: {sorted(rules)}")
    missing = sorted(set(rules) - set(flat))
    if missing:
        raise SpecError(f"config is missing required key(s) {missing}")
    for key, rule in rules.items():
        rule.check(key, flat[key])


def spec_from_config(config: ml_collections.ConfigDict) -> dataset.DatasetSpec:
    """Check `config` and return its `DatasetSpec` (all checks before any compute):
    `SpecError` for a key or value the schema refuses, ValueError for a physical check."""
    return spec_and_metadata(config)[0]


def spec_and_metadata(config: ml_collections.ConfigDict) -> tuple[dataset.DatasetSpec, dict]:
    """`spec_from_config` and the metadata its physical checks computed (`dataset_metadata`)."""
    from lib.pde import dataset   # JAX, loaded only when a config is checked

    check(config, schema(config.pde))
    spec = dataset.DatasetSpec(pde=config.pde, params=config.params.to_dict(), **config.data.to_dict())
    return spec, dataset.dataset_metadata(spec)
