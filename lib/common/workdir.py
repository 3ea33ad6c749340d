"""The workdir layout every run shares, its lock, config identity, restarts, atomic writes.

    <workdir>/config.json     the resolved config of the run
    <workdir>/metrics.jsonl   one JSON object per logged step (process 0 only)
    <workdir>/checkpoints/    Orbax steps (see lib.common.checkpoint)
    <workdir>/plots/*.png     figures
    <workdir>/results.json    final evaluation numbers
    <workdir>/.lock           who runs in it (see lib.common.workdir_lock)

One run per workdir. `prepare` takes an exclusive lock on `<workdir>/.lock` for the life of
the process (primary process only; re-entrant for sub-folders in the same process); a
second process on the workdir stops at once with a `WorkdirError` naming the holder's PID
and host (exit 2 through `cli.run`).

Config identity on resume (`prepare`). A rerun in an existing workdir resumes it, so
`prepare` first checks that the config computes the same thing as the stored config.json:

    run.*                                 run-time only: stored, never compared (a budget,
                                          loader workers: how long / how to run)
    train.log_every, checkpoint_every,    resumable: may change (log or save more often)
    keep_checkpoints
    train.num_steps                       refused when changed, unless the experiment
                                          declares `prepare(..., steps_extendable=True)`
    a key config.json lacks               accepted only when declared in
                                          `prepare(..., added={key: old_behaviour_value})`
                                          with that value now; logged
    a key config.json holds under an      read as the new name when declared in
    old name                              `prepare(..., renamed={old: new})`; logged
    every other key                       must be equal; else a `WorkdirError` (a
                                          `ConfigError`: one line, exit 2) naming every
                                          differing, new or missing key

Why `train.num_steps` is refused: learning-rate schedules are built from it (cosine decay through
lib/common/optim.make_schedule: GMFlow, the LM fine-tunes of EditLord, JETTS, SWE-Gym and
LM, SketchDNN, MultiPDENet, cl_similarity; 3D-FLEG, Dynamic DETR's dense stage),
so a resumed run with another num_steps would follow neither schedule: its learning rate
jumps at the resume step. Keeping the old horizon instead would make a "longer" run decay
to its end value at the old step count and train on at that value, which is not what a
longer run means either. So the harness refuses; to train for another number of steps use a
new workdir. An experiment in which num_steps sets nothing but how many steps run
(constant learning rate, no schedule or cadence derived from it) declares
`steps_extendable=True`, and then it may change on resume.

Restarts. A workdir whose progress no checkpoint can restore (its checkpoints moved to
`checkpoints_damaged/` as unreadable, or gone while metrics.jsonl has rows after step 0, or a
best state of a later step in `checkpoints_best/`) is never silently trained again from
step 0: every rerun stops with the same one-line `RestartRequired` until it is given
`--restart` (`allow_restart`), which moves checkpoints*, best.json, metrics.jsonl,
results.* and tensorboard/ into `<workdir>/restarted_<UTC time>/` (config.json copied;
nothing deleted) and starts fresh. `--restart` changes nothing in a workdir that resumes.

Put every setting that does not change what is computed in the top-level `run` block
(never under `train`/`data`), and when adding a key to an experiment whose workdirs must
keep resuming, declare it in `added` with the value that reproduces the old behaviour; when
renaming a key, declare the old name in `renamed` (`Key(..., was=old)`, `renamed_of`).
"""
from __future__ import annotations

import datetime
import glob
import json
import os
import shutil
import sys
import tempfile
from typing import Any, Mapping

from absl import logging

from lib.common import workdir_lock
from lib.common.config import WorkdirError, rename_keys

CONFIG = "config.json"
METRICS = "metrics.jsonl"
CHECKPOINTS = "checkpoints"
PLOTS = "plots"
RESULTS = "results.json"
BEST_CHECKPOINTS = "checkpoints_best"   # = lib.common.train_loop.BEST_CHECKPOINTS
BEST_RECORD = "best.json"               # = lib.common.train_loop.BEST_RECORD
DAMAGED_SUFFIX = "_damaged"             # <checkpoint folder>_damaged/ holds unreadable steps
RESTARTED_PREFIX = "restarted_"


def write_text_atomic(path: str, text: str) -> None:
    """Write `text` to `path` atomically: see `write_bytes_atomic`."""
    _write_atomic(path, text, "w")


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` via a temporary file and `os.replace` (never half-written).

    The file gets the mode a plain `open(path, "w")` would give (0644 under the usual umask
    022), and is fsynced before the rename, its directory after it, so a crash leaves the
    old or the new contents, never an empty file.
    """
    _write_atomic(path, data, "wb")


def _write_atomic(path: str, data: str | bytes, mode: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    suffix = os.path.splitext(path)[1] or ".txt"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp_", suffix=suffix)
    try:
        with os.fdopen(fd, mode) as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(directory)


def _umask() -> int:
    """This process's umask, read without changing it where /proc allows."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:       # some filesystems cannot fsync a directory
        pass
    finally:
        os.close(fd)


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


# `train` keys a resumed run may change (log or save more often); `num_steps` only with
# `prepare(..., steps_extendable=True)` (see the module docstring).
RESUMABLE_KEYS = ("log_every", "checkpoint_every", "keep_checkpoints")
STEPS_KEY = "num_steps"
# The top-level block of run-time-only settings: stored in config.json, never compared.
RUN_BLOCK = "run"


def prepare(workdir: str, config_dict: dict, *, primary: bool = True,
            added: Mapping[str, Any] | None = None, renamed: Mapping[str, str] | None = None,
            steps_extendable: bool = False) -> None:
    """Lock the workdir, create it and record the config; refuse a workdir of another run.

    The primary process takes the workdir's lock first (`lib.common.workdir_lock`; a
    `WorkdirError` naming the holder when another live process has it). Then the config
    identity rule (what a rerun in an existing workdir may change):

    0. A key the stored config.json holds under an old name declared in `renamed` ({old
       dotted key: new dotted key}, `config.renamed_of(KEYS)`) is read as the new name
       (`config.rename_keys`), then compared like any other key; a resume logs each rename.
    1. Run-time only, never compared: the top-level `run` block (a wall-clock budget, loader
       workers, anything that says how long or how to run, not what to compute) and
       `train.{log_every, checkpoint_every, keep_checkpoints}`; also `train.num_steps`
       when `steps_extendable` (the experiment builds nothing from it but the step count).
       The new values are written to config.json (a change of `run` is logged).
    2. Keys this config has and the stored config.json lacks (a key the experiment added
       after the workdir was made) are accepted only when declared in `added`
       ({dotted key: the value that reproduces the behaviour before the key existed}) and
       their value here equals it; each accepted one is logged. An undeclared new key, or
       one whose value differs from its declaration, is refused.
    3. Every other key must be equal, `train.num_steps` included (schedules are built from
       it). A changed value, or a stored key this config lacks, raises `WorkdirError`
       before anything is written, naming every such key.

    So checkpoints of one run are never resumed (or overwritten) by another, while a
    different budget or a key added with its old behaviour as value resumes.
    """
    os.makedirs(os.path.join(workdir, PLOTS), exist_ok=True)
    if primary and _process_zero():
        workdir_lock.acquire(workdir)
    path = os.path.join(workdir, CONFIG)
    new = json.loads(json.dumps(config_dict, default=_default))
    if os.path.exists(path):
        old, moved = rename_keys(read_json(path), renamed or {})
        added = json.loads(json.dumps(dict(added or {}), default=_default))
        free = RESUMABLE_KEYS + ((STEPS_KEY,) if steps_extendable else ())
        problems, accepted = _compare(_identity(old, free), _identity(new, free), added)
        problems = [_renamed_problem(_steps_problem(p, old, new), moved) for p in problems]
        if problems:
            raise WorkdirError(
                f"workdir {workdir!r} holds a run with a different config "
                f"({'; '.join(problems)}); use a new --workdir, or delete the old one to "
                "start over")
        for was, now in moved.items():
            logging.warning("config key %r of %s is read as %r (its new name)", was, path, now)
        for key in accepted:
            logging.warning("config key %r is new since %s was written; accepted because its "
                            "value %r is the declared behaviour before it existed",
                            key, path, accepted[key])
        if old.get(RUN_BLOCK) != new.get(RUN_BLOCK):
            logging.info("run-time block %r changed since the last run: %r -> %r (not part of "
                         "the config identity)", RUN_BLOCK, old.get(RUN_BLOCK), new.get(RUN_BLOCK))
    if primary:
        write_json_atomic(path, new)


def _process_zero() -> bool:
    """False on the non-primary processes of a multi-host JAX run (only process 0 locks)."""
    jax = sys.modules.get("jax")
    return jax is None or jax.process_index() == 0


def _steps_problem(problem: str, old: dict, new: dict) -> str:
    """`problem` with what to do added when it is the train.num_steps change."""
    key = f"'train.{STEPS_KEY}'"
    if not problem.startswith(key + ":"):
        return problem
    was, now = old["train"][STEPS_KEY], new["train"][STEPS_KEY]
    return (f"{problem}: schedules are built from it, so a resumed run would follow "
            f"neither; use a new --workdir to train for {now} steps, or rerun with "
            f"--config.train.{STEPS_KEY}={was}")


def _renamed_problem(problem: str, moved: Mapping[str, str]) -> str:
    """`problem` naming the stored name too when its key was read under an old name."""
    for was, now in moved.items():
        if problem.startswith(f"'{now}':"):
            return f"'{now}' (stored as '{was}'){problem[len(now) + 2:]}"
    return problem


def _identity(cfg: dict, free: tuple[str, ...] = RESUMABLE_KEYS) -> dict:
    """The part of a config a resume must keep: all but `run` and the `free` train keys."""
    out = {k: v for k, v in cfg.items() if k != RUN_BLOCK}
    if isinstance(out.get("train"), dict):
        out["train"] = {k: v for k, v in out["train"].items() if k not in free}
    return out


# ----------------------------------------------------------------------------- restarts

_RESTART = False


def allow_restart(allowed: bool = True) -> None:
    """Let `check_fresh_start` move a workdir's unrestorable progress aside and start fresh
    (set by `cli.run` from `--restart`); without it such a workdir is refused."""
    global _RESTART
    _RESTART = bool(allowed)


def restart_allowed() -> bool:
    return _RESTART


def lost_progress(workdir: str, checkpoints: str = CHECKPOINTS) -> list[str]:
    """What in `workdir` shows progress that a fresh start from step 0 would throw away,
    once nothing in `<workdir>/<checkpoints>/` restores: unreadable steps moved to
    `<checkpoints>_damaged/`, metrics.jsonl rows after step 0, a best state after step 0
    (`checkpoints_best/`, `best.json`). Empty when a fresh start loses nothing."""
    found = []
    damaged = _entries(os.path.join(workdir, checkpoints + DAMAGED_SUFFIX))
    if damaged:
        found.append(f"{checkpoints}{DAMAGED_SUFFIX}/ holds unreadable step(s) "
                     f"{', '.join(damaged)}")
    rows = _rows_after_zero(os.path.join(workdir, METRICS))
    if rows:
        found.append(f"{METRICS} has {len(rows)} row(s) up to step {max(rows)}")
    best = [s for s in _entries(os.path.join(workdir, BEST_CHECKPOINTS))
            if s.isdigit() and int(s) > 0]
    if best:
        found.append(f"{BEST_CHECKPOINTS}/ holds step(s) {', '.join(best)}")
    results = sorted(os.path.basename(p) for p in glob.glob(os.path.join(workdir, "results.*")))
    if results:
        found.append(f"{', '.join(results)} present")
    record = os.path.join(workdir, BEST_RECORD)
    if os.path.exists(record):
        try:
            step = read_json(record).get("step")
        except (OSError, ValueError, AttributeError):
            step = None
        if step != 0:
            found.append(f"{BEST_RECORD} names step {step}")
    return found


def restart_message(workdir: str, found: list[str]) -> str:
    """The one-line refusal of a workdir whose progress no checkpoint restores."""
    return (f"workdir {workdir!r} holds progress that no checkpoint restores "
            f"({'; '.join(found)}); nothing was moved or trained. Rerun with --restart to move "
            f"it into {os.path.join(workdir, RESTARTED_PREFIX)}<UTC time>/ and train from "
            "step 0, or use a new --workdir")


class RestartRequired(WorkdirError):
    """The workdir's progress cannot be restored and `--restart` was not given."""


def check_fresh_start(workdir: str, checkpoints: str = CHECKPOINTS, *,
                      archive: bool = True) -> str | None:
    """Call before training `workdir` from step 0 because nothing in `<checkpoints>/`
    restored. Returns None when a fresh start loses nothing; raises `RestartRequired`
    when it would (`lost_progress`) and no restart is allowed; with `--restart` moves the
    old run aside (`restart`, when `archive`: the primary process) and returns where."""
    found = lost_progress(workdir, checkpoints)
    if not found:
        return None
    if not _RESTART and needs_restart_flag(found):
        raise RestartRequired(restart_message(workdir, found))
    return restart(workdir, automatic=not _RESTART) if archive else ""


def needs_restart_flag(found: list[str]) -> bool:
    """False when the only evidence is metrics rows (a run stopped before its first
    checkpoint, nothing else written): those are archived automatically, since training
    from step 0 loses nothing; anything else (unreadable steps, a best state, results)
    waits for `--restart`."""
    return not all(item.startswith(METRICS + " ") for item in found)


def restart(workdir: str, automatic: bool = False) -> str:
    """Move this run's outputs into `<workdir>/restarted_<UTC time>/` (nothing deleted):
    checkpoints*/, best.json, metrics.jsonl, results.*, tensorboard/; copy config.json.
    Returns the new folder. `automatic`: no `--restart` was given (see `needs_restart_flag`)."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    dst = os.path.join(workdir, RESTARTED_PREFIX + stamp)
    n = 0
    while os.path.exists(dst):
        n += 1
        dst = os.path.join(workdir, f"{RESTARTED_PREFIX}{stamp}.{n}")
    os.makedirs(dst)
    names = [CHECKPOINTS, CHECKPOINTS + DAMAGED_SUFFIX, BEST_CHECKPOINTS,
             BEST_CHECKPOINTS + DAMAGED_SUFFIX, BEST_RECORD, METRICS, "tensorboard"]
    names += sorted(os.path.basename(p) for p in glob.glob(os.path.join(workdir, "results.*")))
    moved = []
    for name in names:
        src = os.path.join(workdir, name)
        if os.path.lexists(src):
            shutil.move(src, os.path.join(dst, name))
            moved.append(name)
    if os.path.exists(os.path.join(workdir, CONFIG)):
        shutil.copy2(os.path.join(workdir, CONFIG), os.path.join(dst, CONFIG))
    logging.warning("%s: moved %s of %s into %s; training from step 0",
                    "no checkpoint was written before the last run stopped" if automatic
                    else "--restart", ", ".join(moved) or "nothing", workdir, dst)
    return dst


def _entries(directory: str) -> list[str]:
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted((n for n in names if not n.startswith(".")),
                  key=lambda n: (not n.split(".")[0].isdigit(),
                                 int(n.split(".")[0]) if n.split(".")[0].isdigit() else 0, n))


def _rows_after_zero(path: str) -> list[int]:
    """Steps > 0 of the rows of a metrics.jsonl (a torn line is skipped)."""
    steps = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    step = json.loads(line).get("step")
                except (json.JSONDecodeError, AttributeError):
                    continue
                if isinstance(step, int) and step > 0:
                    steps.append(step)
    except FileNotFoundError:
        pass
    return steps


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
