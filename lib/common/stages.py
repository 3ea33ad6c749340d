"""Stages: named, resumable sub-runs of one experiment, with cached results.

    stages = Stages(workdir)                       # <workdir>/stages/
    pairs = stages.run("pairs", lambda d: build_pairs(config))          # cached result
    info = stages.run("models/base", lambda d: finetune(..., workdir=d),
                      identity={"lr": 3e-4, "steps": 200})

A stage `name` (slash-separated, e.g. "runs/digits/dsl") owns

    <root>/<name>/               its workdir, passed to `fn` (removed again if left empty)
    <root>/<name>.json           its result, written atomically once `fn` returned
    <root>/_stages.json          per stage: its identity and wall seconds (all stages)

`run` returns the stored result when it exists (no work, no preemption check), else calls
`fn(stage_dir)`; a sub-run inside `fn` resumes from its own checkpoints, so a stage killed
half-way restarts where it was. The result must be JSON-serialisable (numpy scalars and
arrays are converted as in `workdir.write_json_atomic`).

Identity: a stage may declare the settings that decide its result. A stored result whose
recorded identity differs is refused with a `WorkdirError` naming the stage and the keys
(never silently reused, never silently recomputed). A stored result from before identities
were recorded (no entry in _stages.json) is accepted as it is.

Preemption: a stage never starts, and never publishes its result, after SIGTERM
(`guards.check_preempted`). On a multi-host run only the primary process writes.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from absl import logging

from lib.common import guards
from lib.common import workdir as wd
from lib.common.config import WorkdirError

INDEX = "_stages.json"


def _normalise(obj: Any) -> Any:
    """`obj` as JSON would give it back (tuples as lists, numpy as Python numbers)."""
    import json
    return json.loads(json.dumps(obj, default=wd._default))


def _primary() -> bool:
    from lib.common import mesh as mesh_lib
    return mesh_lib.is_primary()


class Stages:
    """The stages of one run under `<workdir>/<folder>` (see the module docstring)."""

    def __init__(self, workdir: str, folder: str = "stages", log_name: str | None = None):
        self.root = os.path.join(workdir, folder)
        self.log_name = log_name or os.path.basename(os.path.abspath(workdir))
        os.makedirs(self.root, exist_ok=True)
        path = os.path.join(self.root, INDEX)
        self.index: dict[str, dict] = wd.read_json(path) if os.path.exists(path) else {}

    def dir(self, name: str) -> str:
        """The workdir of stage `name` (created)."""
        _check_name(name)
        path = os.path.join(self.root, *name.split("/"))
        os.makedirs(path, exist_ok=True)
        return path

    def result_path(self, name: str) -> str:
        _check_name(name)
        return os.path.join(self.root, *name.split("/")) + ".json"

    def done(self, name: str) -> bool:
        return os.path.exists(self.result_path(name))

    def wall_s(self, name: str) -> float | None:
        """Seconds the stage's `fn` took when it ran (None when unknown)."""
        return self.index.get(name, {}).get("wall_s")

    def run(self, name: str, fn: Callable[[str], Any], *,
            identity: dict | None = None) -> Any:
        """The result of stage `name`: stored, or computed by `fn(stage_dir)` and stored."""
        path = self.result_path(name)
        ident = None if identity is None else _normalise(identity)
        if os.path.exists(path):
            self._check_identity(name, ident)
            return wd.read_json(path)
        guards.check_preempted(f"stage {name}")
        t0 = time.perf_counter()
        stage_dir = self.dir(name)
        out = fn(stage_dir)
        wall = time.perf_counter() - t0
        if not os.listdir(stage_dir):          # a stage that kept nothing leaves no folder
            os.rmdir(stage_dir)
        guards.check_preempted(f"writing stage {name}")
        if _primary():
            wd.write_json_atomic(path, out)
            self.index[name] = {"identity": ident, "wall_s": wall}
            wd.write_json_atomic(os.path.join(self.root, INDEX), self.index)
        logging.info("%s: stage %s done in %.1f s", self.log_name, name, wall)
        return _normalise(out)

    def _check_identity(self, name: str, ident: dict | None) -> None:
        entry = self.index.get(name)
        if entry is None or ident is None or entry.get("identity") is None:
            return
        old = entry["identity"]
        if old == ident:
            return
        keys = sorted(k for k in set(old) | set(ident) if old.get(k) != ident.get(k))
        raise WorkdirError(
            f"stage {name!r} in {self.root!r} was computed with other settings "
            f"({', '.join(f'{k}: {old.get(k)!r} -> {ident.get(k)!r}' for k in keys)}); "
            "use a new --workdir, or delete the stage's result to recompute it")


def _check_name(name: str) -> None:
    parts = name.split("/")
    if not name or any(p in ("", ".", "..") for p in parts) or name.startswith("_"):
        raise ValueError(f"bad stage name {name!r}: slash-separated, non-empty parts, "
                         "no '.', '..' or leading '_'")
