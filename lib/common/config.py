"""Configs as code: load `configs/<name>/<file>.py:variant`, apply overrides, validate.

A config file defines `get_config(arg) -> ml_collections.ConfigDict`; `arg` names the
variant ("tiny", "quick", "paper", ...). Each experiment declares a *schema*: a flat dict
from dotted key to a `Rule` (`Int`, `Float`, `Bool`, `Str`, `Choice`, ...). `validate`
checks that the config has exactly the schema's keys and that every value is of the
right type and range; a violation is a `ConfigError` (a `ValueError`) naming the key,
the value and what is allowed, raised before any compute.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import difflib
import importlib.util
import math
import os
import sys
import traceback
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import ml_collections


class ConfigError(ValueError):
    """A config value, key or override that the experiment does not accept."""


class WorkdirError(ConfigError):
    """A workdir that cannot be used as asked: it holds a run with a different config, another
    process is running in it, or its checkpoints cannot continue the run. Like every
    `ConfigError`, `lib.common.cli.run` prints it as one line and exits 2."""


# ----------------------------------------------------------------------------- rules


@dataclasses.dataclass(frozen=True)
class Rule:
    """Base class: `check(key, value)` raises `ConfigError` or returns None."""

    def check(self, key: str, value: Any) -> None:
        raise NotImplementedError

    def _fail(self, key: str, value: Any, allowed: str) -> None:
        raise ConfigError(f"config key '{key}' = {value!r} is not allowed; expected {allowed}")


def _range_text(lo, hi, lo_open: bool, hi_open: bool) -> str:
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi}")
    return " and ".join(parts)


@dataclasses.dataclass(frozen=True)
class _Number(Rule):
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    kind: str = "number"

    def _type_ok(self, value: Any) -> bool:
        raise NotImplementedError

    def check(self, key: str, value: Any) -> None:
        rng = _range_text(self.lo, self.hi, self.lo_open, self.hi_open)
        allowed = self.kind + (f" {rng}" if rng else "")
        if not self._type_ok(value):
            self._fail(key, value, allowed)
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            self._fail(key, value, allowed)
        if self.hi is not None and (value > self.hi or (self.hi_open and value == self.hi)):
            self._fail(key, value, allowed)


@dataclasses.dataclass(frozen=True)
class Int(_Number):
    """An integer (bools are rejected) in an optional closed range."""

    kind: str = "an int"

    def _type_ok(self, value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class Float(_Number):
    """A real number (ints accepted, bools rejected) in an optional range."""

    kind: str = "a float"

    def _type_ok(self, value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class Bool(Rule):
    def check(self, key: str, value: Any) -> None:
        if not isinstance(value, bool):
            self._fail(key, value, "a bool (True or False)")


@dataclasses.dataclass(frozen=True)
class Str(Rule):
    """Any string; `allow_empty=False` rejects ''."""

    allow_empty: bool = True

    def check(self, key: str, value: Any) -> None:
        if not isinstance(value, str) or (not self.allow_empty and not value):
            self._fail(key, value, "a non-empty string" if not self.allow_empty else "a string")


@dataclasses.dataclass(frozen=True)
class Choice(Rule):
    """One of a fixed set of values."""

    options: tuple = ()

    def check(self, key: str, value: Any) -> None:
        if value not in self.options:
            self._fail(key, value, f"one of {list(self.options)}")


@dataclasses.dataclass(frozen=True)
class Ints(Rule):
    """A tuple/list of ints, each >= `lo`, of length `length` when given."""

    lo: int | None = None
    length: int | None = None

    def check(self, key: str, value: Any) -> None:
        allowed = "a sequence of ints" + (f" >= {self.lo}" if self.lo is not None else "")
        if self.length is not None:
            allowed += f" of length {self.length}"
        if not isinstance(value, (tuple, list)):
            self._fail(key, value, allowed)
        for v in value:
            if not isinstance(v, int) or isinstance(v, bool) or (self.lo is not None and v < self.lo):
                self._fail(key, value, allowed)
        if self.length is not None and len(value) != self.length:
            self._fail(key, value, allowed)


@dataclasses.dataclass(frozen=True)
class Names(Rule):
    """A tuple/list of distinct names, each one of `options` (non-empty unless allow_empty)."""

    options: tuple = ()
    allow_empty: bool = False

    def check(self, key: str, value: Any) -> None:
        allowed = (f"a {'' if self.allow_empty else 'non-empty '}sequence of distinct names "
                   f"from {list(self.options)}")
        if (not isinstance(value, (tuple, list)) or (not value and not self.allow_empty)
                or len(set(value)) != len(value) or any(v not in self.options for v in value)):
            self._fail(key, value, allowed)


@dataclasses.dataclass(frozen=True)
class Floats(Rule):
    """A non-empty tuple/list of finite reals, each within [lo, hi] (either end open or
    absent), strictly increasing when `increasing`."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    increasing: bool = False

    def _describe(self) -> str:
        parts = ["a non-empty" + (" strictly increasing" if self.increasing else "")
                 + " sequence of finite numbers"]
        if self.lo is not None:
            parts.append(f"{'>' if self.lo_open else '>='} {self.lo}")
        if self.hi is not None:
            parts.append(f"{'<' if self.hi_open else '<='} {self.hi}")
        return " ".join(parts[:1]) + ("" if len(parts) == 1 else " " + " and ".join(parts[1:]))

    def check(self, key: str, value: Any) -> None:
        if not isinstance(value, (tuple, list)) or not value:
            self._fail(key, value, self._describe())
        for v in value:
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  and (self.lo is None or (v > self.lo if self.lo_open else v >= self.lo))
                  and (self.hi is None or (v < self.hi if self.hi_open else v <= self.hi)))
            if not ok:
                self._fail(key, value, self._describe())
        if self.increasing and any(b <= a for a, b in zip(value, value[1:])):
            self._fail(key, value, self._describe())


@dataclasses.dataclass(frozen=True)
class Optional(Rule):
    """None, or a value that passes `rule`."""

    rule: Rule = dataclasses.field(default_factory=Str)

    def check(self, key: str, value: Any) -> None:
        if value is not None:
            self.rule.check(key, value)


Schema = Mapping[str, Rule]

# The blocks every experiment config shares (`train_block()` / `mesh_block()` build them).
TRAIN_SCHEMA: dict[str, Rule] = {
    "train.num_steps": Int(lo=1),
    "train.log_every": Int(lo=1),
    "train.checkpoint_every": Int(lo=1),
    "train.keep_checkpoints": Int(lo=1),
    "train.seed": Int(lo=0),
}
MESH_SCHEMA: dict[str, Rule] = {
    "mesh.data": Int(lo=-1),
    "mesh.model": Int(lo=1),
}


def train_block(num_steps: int, *, log_every: int = 10, checkpoint_every: int = 100,
                keep_checkpoints: int = 3, seed: int = 0) -> ml_collections.ConfigDict:
    """The shared `config.train` block read by `lib.common.train_loop.LoopConfig`."""
    return ml_collections.ConfigDict(dict(
        num_steps=num_steps, log_every=log_every, checkpoint_every=checkpoint_every,
        keep_checkpoints=keep_checkpoints, seed=seed))


def mesh_block(data: int = -1, model: int = 1) -> ml_collections.ConfigDict:
    """The shared `config.mesh` block read by `lib.common.mesh.make_mesh`."""
    return ml_collections.ConfigDict(dict(data=data, model=model))

# ----------------------------------------------------------------------------- loading


def _module_of(path: str):
    """Execute a config file as a module (config files declare `get_config`, `VARIANTS`,
    and `validate(config)`)."""
    if not os.path.isfile(path):
        raise ConfigError(f"config file {path!r} does not exist")
    module_spec = importlib.util.spec_from_file_location(
        f"_config_{abs(hash(os.path.abspath(path)))}", path
    )
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_spec.name] = module  # dataclasses and pickling look modules up here
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as err:
        same = err.filename and os.path.realpath(err.filename) == os.path.realpath(path)
        where = f"{path}:{err.lineno}" if same else f"{path} (importing {err.filename}:{err.lineno})"
        raise ConfigError(f"config file {where}: syntax error: {err.msg}") from err
    except ConfigError:
        raise
    except Exception as err:
        raise ConfigError(_raised_in(path, err, "while loading it")) from err
    if not hasattr(module, "get_config"):
        raise ConfigError(f"config file {path!r} defines no get_config(arg)")
    return module


def _raised_in(path: str, err: BaseException, when: str) -> str:
    """One line naming the last line of config file `path` in `err`'s traceback and the
    error (`when`: what was being done)."""
    line = None
    target = os.path.realpath(path)
    for frame in traceback.extract_tb(err.__traceback__):
        if os.path.realpath(frame.filename) == target:
            line = frame.lineno
    where = f"{path}:{line}" if line is not None else path
    message = " ".join(str(err).split())
    return f"config file {where}: {type(err).__name__}{': ' + message if message else ''} ({when})"


def load_config(spec: str) -> ml_collections.ConfigDict:
    """Load `path/to/config.py[:arg]` by calling its `get_config(arg)`.

    Raises `ConfigError` when the file does not exist, has a syntax error, raises while
    loading or inside `get_config` (one line naming the file and line), or defines no
    `get_config`, and (through `variant_config`) for an unknown variant.
    """
    path, _, arg = spec.partition(":")
    module = _module_of(path)
    try:
        return module.get_config(arg or None)
    except ConfigError:
        raise
    except Exception as err:
        raise ConfigError(_raised_in(path, err, f"in get_config({arg or None!r})")) from err


def load_config_json(path: str, renamed: Mapping[str, str] | None = None
                     ) -> ml_collections.ConfigDict:
    """A run's recorded `config.json` as a locked ConfigDict (lists become tuples), with
    keys recorded under an old name read as their new one (`renamed`: {old dotted key: new},
    `renamed_of(KEYS)`; see `rename_keys`)."""
    import json  # noqa: PLC0415

    def tuples(obj):
        if isinstance(obj, dict):
            return {k: tuples(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return tuple(tuples(v) for v in obj)
        return obj

    with open(path) as f:
        stored, _ = rename_keys(json.load(f), renamed or {})
    config = ml_collections.ConfigDict(tuples(stored))
    config.lock()
    return config


def variant_config(variants: Mapping[str, Callable[[], Any]], arg: str | None, default: str):
    """Helper for config files: dispatch `arg` to a variant builder with a clear error."""
    name = arg or default
    if name not in variants:
        raise ConfigError(f"unknown config variant {name!r}; allowed: {sorted(variants)}"
                          f"{_suggest(name, variants)}")
    return variants[name]()


def flatten(config: ml_collections.ConfigDict | Mapping, prefix: str = "") -> dict[str, Any]:
    """Flatten nested ConfigDicts/dicts into {"a.b.c": value}."""
    out: dict[str, Any] = {}
    items = config.items()
    for key, value in items:
        full = f"{prefix}{key}"
        if isinstance(value, (ml_collections.ConfigDict, dict)):
            out.update(flatten(value, full + "."))
        else:
            out[full] = value
    return out


# ----------------------------------------------------------------------------- key tables
# One home per config key: its default and its rule side by side (`Key`), from which both
# the config a `configs/<name>/*.py` file builds (`from_keys`) and the schema `validate`
# checks (`rules_of`) are derived; `added_of` gives `workdir.prepare(added=...)` and
# `renamed_of` gives `workdir.prepare(renamed=...)` and `rename_keys` (stored configs written
# under a key's old name). Adding a key is one `Key(...)` line plus the code that reads it.

REQUIRED = "<required>"   # a default every config file must state
_NEW = object()


class Key(NamedTuple):
    """A config key's default, its `Rule`, and (optionally) `before`: the value that
    reproduces runs recorded before the key existed, and `was`: the key's old dotted name,
    under which older runs recorded it (so their workdirs keep resuming and their stored
    configs keep loading)."""
    default: Any
    rule: "Rule"
    before: Any = _NEW
    was: str | None = None


def keys_of_block(prefix: str, block: ml_collections.ConfigDict, rules: Mapping) -> dict:
    """`Key`s for a shared block (`train_block()`, `mesh_block()`) under `prefix`, with
    their rules from `rules` (e.g. `TRAIN_SCHEMA`)."""
    return {k: Key(v, rules[k]) for k, v in flatten(block, prefix + ".").items()}


def rules_of(keys: Mapping[str, Key]) -> dict:
    """The schema ({dotted key: Rule}) of a key table."""
    return {k: key.rule for k, key in keys.items()}


def added_of(keys: Mapping[str, Key]) -> dict:
    """{dotted key: value before it existed} for `workdir.prepare(added=...)`."""
    return {k: key.before for k, key in keys.items() if key.before is not _NEW}


def renamed_of(keys: Mapping[str, Key]) -> dict:
    """{old dotted key: new dotted key} for `workdir.prepare(renamed=...)` and `rename_keys`."""
    return {key.was: k for k, key in keys.items() if key.was is not None}


def rename_keys(tree: Mapping, renamed: Mapping[str, str]) -> tuple[dict, dict]:
    """(a copy of `tree`, a nested dict such as a stored config.json, with each old dotted
    key of `renamed` ({old: new}) that it holds moved to its new name, {old: new} of those
    moved). A key keeps its place when only its last name changes. A tree that already holds
    the new name keeps the old key as it is (a config cannot hold both)."""
    out = copy.deepcopy(dict(tree))
    moved = {}
    for old, new in renamed.items():
        *old_parents, old_leaf = old.split(".")
        *new_parents, new_leaf = new.split(".")
        src = _node(out, old_parents)
        if src is None or old_leaf not in src or _has(out, new):
            continue
        if old_parents == new_parents:
            items = list(src.items())
            src.clear()
            src.update((new_leaf if k == old_leaf else k, v) for k, v in items)
        else:
            dst = out
            for name in new_parents:
                dst = dst.setdefault(name, {})
            dst[new_leaf] = src.pop(old_leaf)
        moved[old] = new
    return out, moved


def _node(tree: dict, names: Sequence[str]) -> dict | None:
    for name in names:
        tree = tree.get(name) if isinstance(tree, dict) else None
    return tree if isinstance(tree, dict) else None


def _has(tree: dict, dotted: str) -> bool:
    *parents, leaf = dotted.split(".")
    node = _node(tree, parents)
    return node is not None and leaf in node


def from_keys(keys: Mapping[str, Key], overrides: Mapping[str, Any], *, where: str,
              extra: Mapping[str, Any] | None = None) -> ml_collections.ConfigDict:
    """The config of `keys`' defaults with `overrides` (flat dotted keys) applied, and the
    `extra` top-level blocks (e.g. a dataset config) set as they are.

    ConfigError naming `where` (the schema file) for an unknown override (with a "did you
    mean") or for a `REQUIRED` key left unstated.
    """
    renamed = renamed_of(keys)
    for k in overrides:
        if k in renamed:
            raise ConfigError(f"{where}: config key {k!r} is now called {renamed[k]!r}")
        if k not in keys:
            raise ConfigError(f"{where}: unknown config key {k!r}{_suggest(k, keys)}")
    flat = {k: key.default for k, key in keys.items()} | dict(overrides)
    missing = sorted(k for k, v in flat.items() if isinstance(v, str) and v == REQUIRED)
    if missing:
        raise ConfigError(f"{where}: the config must state {missing}")
    c = ml_collections.ConfigDict()
    for name, block in (extra or {}).items():
        c[name] = block
    for key, value in flat.items():
        *parents, leaf = key.split(".")
        block = c
        for name in parents:
            if name not in block:
                block[name] = ml_collections.ConfigDict()
            block = block[name]
        block[leaf] = value
    return c


def config_builder(keys: Mapping[str, Key], where: str):
    """A schema file's `config(overrides)`: `from_keys(keys, overrides, where=where)`.

        config = config_lib.config_builder(KEYS, "lib/<paper>/config_schema.py")
    """
    def config(overrides: Mapping[str, Any]) -> ml_collections.ConfigDict:
        """The defaults of `KEYS` with `overrides` (flat dotted keys) in place; ConfigError
        for an unknown key or a `REQUIRED` key left unstated."""
        return from_keys(keys, overrides, where=where)
    return config


def _suggest(key: str, known: Iterable[str]) -> str:
    """"; did you mean ...?" with up to 3 close keys; keys whose last part equals the typo's
    come first (`trian.lr` -> `optim.lr` before `train.remat`)."""
    known = list(known)
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    leaf = key.rsplit(".", 1)[-1]
    same_leaf = [k for k in known if "." in key and k.rsplit(".", 1)[-1] == leaf]
    if len(same_leaf) <= 3:
        close = (same_leaf + [c for c in close if c not in same_leaf])[:3]
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def validate(
    config: ml_collections.ConfigDict,
    schema: Schema,
    checks: Sequence[Callable[[ml_collections.ConfigDict], None]] = (),
) -> ml_collections.ConfigDict:
    """Check `config` against `schema` (exact key set, types, ranges), then `checks`.

    A rule is any object with `check(key, value)`; a ValueError it raises is raised as a
    `ConfigError` with the same message. `checks` are cross-field functions that raise
    `ConfigError` themselves (e.g. "the window must be shorter than the trajectories").
    Returns the config unchanged.
    """
    flat = flatten(config)
    unknown = sorted(set(flat) - set(schema))
    if unknown:
        key = unknown[0]
        raise ConfigError(
            f"unknown config key '{key}' (= {flat[key]!r}){_suggest(key, schema)}; "
            f"allowed keys: {sorted(schema)}"
        )
    missing = sorted(set(schema) - set(flat))
    if missing:
        raise ConfigError(f"config is missing required key(s) {missing}")
    for key, rule in schema.items():
        try:
            rule.check(key, flat[key])
        except ConfigError:
            raise
        except ValueError as err:   # a rule of a layer below the harness (lib.pde.data_config)
            raise ConfigError(str(err)) from None
    for check in checks:
        check(config)
    return config


# ----------------------------------------------------------------------------- overrides


def parse_value(text: str) -> Any:
    """Parse an override value: a Python literal when it is one, else the raw string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def override_keys(argv: Sequence[str], flag: str = "config") -> list[tuple[str, str | None]]:
    """The `--config.a.b=value` overrides in `argv` as [("a.b", "value"), ...]."""
    prefix = f"--{flag}."
    out = []
    for arg in argv:
        if arg.startswith(prefix):
            key, eq, value = arg[len(prefix):].partition("=")
            out.append((key, value if eq else None))
    return out


def check_override_keys(config: ml_collections.ConfigDict, keys: Iterable[str],
                        flag: str = "--config.") -> None:
    """Raise `ConfigError` for an override whose key the config does not have; the message
    names the override as `{flag}{key}` (the command-line form it was given in)."""
    flat = flatten(config)
    for key in keys:
        if key not in flat:
            raise ConfigError(
                f"unknown config key '{key}' in override {flag}{key}{_suggest(key, flat)}"
            )


def apply_overrides(
    config: ml_collections.ConfigDict, overrides: Mapping[str, Any], flag: str = "--config."
) -> ml_collections.ConfigDict:
    """Return a copy of `config` with dotted-key overrides applied (keys must exist; an
    unknown one is named as `{flag}{key}`, see `check_override_keys`).

    A value whose type differs from the default's is rejected, except int -> float.
    """
    check_override_keys(config, overrides, flag)
    out = ml_collections.ConfigDict(config.to_dict())
    flat = flatten(config)
    for key, value in overrides.items():
        default = flat[key]
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if default is not None and type(value) is not type(default) and not (
            isinstance(default, (tuple, list)) and isinstance(value, (tuple, list))
        ):
            raise ConfigError(
                f"config key '{key}' = {value!r} has type {type(value).__name__}; "
                f"expected {type(default).__name__} like the default {default!r}"
            )
        node = out
        *parents, leaf = key.split(".")
        for p in parents:
            node = node[p]
        node[leaf] = value
    out.lock()
    return out


def to_json_dict(config: ml_collections.ConfigDict) -> dict:
    """A JSON-serialisable nested dict (tuples become lists)."""
    return _jsonable(config.to_dict())


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return [_jsonable(v) for v in obj]
    return obj
