"""The workdir layout every run shares, and atomic JSON writes.

    <workdir>/config.json     the resolved config of the run
    <workdir>/metrics.jsonl   one JSON object per logged step (process 0 only)
    <workdir>/checkpoints/    Orbax steps (see lib.common.checkpoint)
    <workdir>/plots/*.png     figures
    <workdir>/results.json    final evaluation numbers

Config identity on resume (`prepare`). A rerun in an existing workdir resumes it, so
`prepare` first checks that the config computes the same thing as the stored config.json:

    run.*                                 run-time only: stored, never compared (a budget,
                                          loader workers: how long / how to run)
    train.num_steps, log_every,           resumable: may change (extend a run, log or save
    checkpoint_every, keep_checkpoints    more often)
    a key config.json lacks               accepted only when declared in
                                          `prepare(..., added={key: old_behaviour_value})`
                                          with that value now; logged
    every other key                       must be equal; else ValueError naming every
                                          differing, new or missing key

Put every setting that does not change what is computed in the top-level `run` block
(never under `train`/`data`), and when adding a key to an experiment whose workdirs must
keep resuming, declare it in `added` with the value that reproduces the old behaviour.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping

from absl import logging

CONFIG = "config.json"
METRICS = "metrics.jsonl"
CHECKPOINTS = "checkpoints"
PLOTS = "plots"
RESULTS = "results.json"


def write_text_atomic(path: str, text: str) -> None:
    """Write `text` to `path` via a temporary file and `os.replace` (never half-written)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    suffix = os.path.splitext(path)[1] or ".txt"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp_", suffix=suffix)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_json_atomic(path: str, obj: Any) -> None:
    """Write JSON to `path` via a temporary file and `os.replace` (never half-written)."""
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, default=_default) + "\n")


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def read_json(path: str) -> Any:
    with open(path) as f:
        return json.load(f)


# `train` keys a resumed run may change (extend training, log or save more often).
RESUMABLE_KEYS = ("num_steps", "log_every", "checkpoint_every", "keep_checkpoints")
# The top-level block of run-time-only settings: stored in config.json, never compared.
RUN_BLOCK = "run"


def prepare(workdir: str, config_dict: dict, *, primary: bool = True,
            added: Mapping[str, Any] | None = None) -> None:
    """Create the workdir and record the config; refuse a workdir of a different run.

    The config identity rule (what a rerun in an existing workdir may change):

    1. Run-time only, never compared: the top-level `run` block (a wall-clock budget, loader
       workers, anything that says how long or how to run, not what to compute) and
       `train.{num_steps, log_every, checkpoint_every, keep_checkpoints}`. The new values
       are written to config.json (a change of `run` is logged).
    2. Keys this config has and the stored config.json lacks (a key the experiment added
       after the workdir was made) are accepted only when declared in `added`
       ({dotted key: the value that reproduces the behaviour before the key existed}) and
       their value here equals it; each accepted one is logged. An undeclared new key, or
       one whose value differs from its declaration, is refused.
    3. Every other key must be equal. A changed value, or a stored key this config lacks,
       raises ValueError before anything is written, naming every such key.

    So checkpoints of one run are never resumed (or overwritten) by another, while a
    different budget or a key added with its old behaviour as value resumes.
    """
    os.makedirs(os.path.join(workdir, PLOTS), exist_ok=True)
    path = os.path.join(workdir, CONFIG)
    new = json.loads(json.dumps(config_dict, default=_default))
    if os.path.exists(path):
        old = read_json(path)
        added = json.loads(json.dumps(dict(added or {}), default=_default))
        problems, accepted = _compare(_identity(old), _identity(new), added)
        if problems:
            raise ValueError(
                f"workdir {workdir!r} holds a run with a different config "
                f"({'; '.join(problems)}); use a new --workdir, or delete the old one to "
                "start over")
        for key in accepted:
            logging.warning("config key %r is new since %s was written; accepted because its "
                            "value %r is the declared behaviour before it existed",
                            key, path, accepted[key])
        if old.get(RUN_BLOCK) != new.get(RUN_BLOCK):
            logging.info("run-time block %r changed since the last run: %r -> %r (not part of "
                         "the config identity)", RUN_BLOCK, old.get(RUN_BLOCK), new.get(RUN_BLOCK))
    if primary:
        write_json_atomic(path, new)


def _identity(cfg: dict) -> dict:
    """The part of a config a resume must keep: all but `run` and the resumable train keys."""
    out = {k: v for k, v in cfg.items() if k != RUN_BLOCK}
    if isinstance(out.get("train"), dict):
        out["train"] = {k: v for k, v in out["train"].items() if k not in RESUMABLE_KEYS}
    return out


def _flat(cfg: dict, prefix: str = "") -> dict[str, Any]:
    """{dotted key: leaf value} of a nested dict; an empty dict is a leaf."""
    out: dict[str, Any] = {}
    for k, v in cfg.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out.update(_flat(v, name + "."))
        else:
            out[name] = v
    return out


def _compare(old: dict, new: dict, added: Mapping[str, Any]) -> tuple[list[str], dict]:
    """(problems, accepted new keys) of rule 2 and 3 of `prepare` on identity configs."""
    a, b = _flat(old), _flat(new)
    problems, accepted = [], {}
    for key in sorted(set(a) | set(b)):
        if key not in b:
            problems.append(f"'{key}' is in the workdir's config.json, not in this config")
        elif key not in a:
            declared = _declared(key, added)
            if declared is _UNDECLARED:
                problems.append(f"'{key}' is new (= {b[key]!r}) and not declared in "
                                "prepare(added=...) with its behaviour before it existed")
            elif declared != b[key]:
                problems.append(f"'{key}' is new and {b[key]!r} now, but declared "
                                f"{declared!r} (its behaviour before it existed)")
            else:
                accepted[key] = b[key]
        elif a[key] != b[key]:
            problems.append(f"'{key}': {a[key]!r} in the workdir, {b[key]!r} now")
    return problems, accepted


_UNDECLARED = object()


def _declared(key: str, added: Mapping[str, Any]) -> Any:
    """The declared old-behaviour value of new leaf `key`: `added[key]`, or the matching
    leaf of a declared new block (`added["block"] = {...}`)."""
    if key in added:
        return added[key]
    for name, value in added.items():
        if key.startswith(name + ".") and isinstance(value, dict):
            return _flat(value, name + ".").get(key, _UNDECLARED)
    return _UNDECLARED
