"""The workdir layout every run shares, and atomic JSON writes.

    <workdir>/config.json     the resolved config of the run
    <workdir>/metrics.jsonl   one JSON object per logged step (process 0 only)
    <workdir>/checkpoints/    Orbax steps (see lib.common.checkpoint)
    <workdir>/plots/*.png     figures
    <workdir>/results.json    final evaluation numbers
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any

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


# Keys a resumed run may change (extend training, log or save more often).
RESUMABLE_KEYS = ("num_steps", "log_every", "checkpoint_every", "keep_checkpoints")


def prepare(workdir: str, config_dict: dict, *, primary: bool = True) -> None:
    """Create the workdir and record the config; refuse a workdir of a different run.

    Resuming needs the same config: a workdir whose `config.json` differs from
    `config_dict` in anything but `train.{num_steps, log_every, checkpoint_every,
    keep_checkpoints}` raises ValueError naming the first differing key, so checkpoints
    of one run are never resumed (or overwritten) by another.
    """
    os.makedirs(os.path.join(workdir, PLOTS), exist_ok=True)
    path = os.path.join(workdir, CONFIG)
    new = json.loads(json.dumps(config_dict, default=_default))
    if os.path.exists(path):
        old = read_json(path)
        if _without_resumable(old) != _without_resumable(new):
            key = _first_difference(_without_resumable(old), _without_resumable(new))
            raise ValueError(
                f"workdir {workdir!r} holds a run with a different config ({key}); "
                "use a new --workdir, or delete the old one to start over"
            )
    if primary:
        write_json_atomic(path, new)


def _without_resumable(cfg: dict) -> dict:
    out = dict(cfg)
    if isinstance(out.get("train"), dict):
        out["train"] = {k: v for k, v in out["train"].items() if k not in RESUMABLE_KEYS}
    return out


def _first_difference(a: Any, b: Any, prefix: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            name = f"{prefix}{key}"
            if key not in a:
                return f"'{name}' is new"
            if key not in b:
                return f"'{name}' is missing"
            if a[key] != b[key]:
                return _first_difference(a[key], b[key], name + ".")
    return f"'{prefix.rstrip('.')}': {a!r} in the workdir, {b!r} now"
