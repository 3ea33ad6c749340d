"""The tiny run of an experiment that tests share, made once per test session for each
(experiment, config) and handed to every module fixture that asks for the same one.

    @pytest.fixture(scope="module")
    def tiny_run(tmp_path_factory):
        return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)

The run lives in `<pytest basetemp>/tiny_runs/` (the base temp shared by the xdist workers of
the session), keyed by the experiment module and the config's JSON; a lock file per key
makes a second worker that asks for the same run wait for the first and reuse it. Tests read
the run; a test that reruns it in place (resume) must leave what other tests read unchanged.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
import shutil

from lib.common import config as config_lib

_RUNS: dict[str, tuple[str, dict]] = {}   # this process's runs, by key


def run_key(train, config) -> str:
    """16 hex digits naming (experiment module, config)."""
    text = json.dumps([train.__name__, config_lib.to_json_dict(config)], sort_keys=True,
                      default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def shared_root(tmp_path_factory) -> str:
    """The session's base temp folder: the xdist controller's (every worker's folder,
    `popen-gwN`, lies in it), or this process's when xdist is not running."""
    base = tmp_path_factory.getbasetemp()
    return str(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)


def tiny_run(tmp_path_factory, train, config, *, overrides: dict | None = None,
             name: str = "run") -> tuple[str, dict]:
    """(workdir, results) of `train.train_and_evaluate(config, workdir)`, made on the first
    request of the session and reused by every later one with the same experiment and config.

    train: the experiment's train module; config: a ConfigDict or "path.py:variant" (loaded
    with lib.common.config, then `overrides` {dotted key: value} applied); name: the
    folder's prefix under `<basetemp>/tiny_runs/`.
    """
    if isinstance(config, str):
        config = config_lib.load_config(config)
    if overrides:
        config = config_lib.apply_overrides(config, overrides)
    key = run_key(train, config)
    if key in _RUNS:
        return _RUNS[key]
    root = os.path.join(shared_root(tmp_path_factory), "tiny_runs")
    os.makedirs(root, exist_ok=True)
    workdir = os.path.join(root, f"{name}-{key}")
    done = os.path.join(root, f"{key}.results.pkl")
    with open(os.path.join(root, f"{key}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)              # released when the file closes
        if os.path.exists(done):
            with open(done, "rb") as f:
                results = pickle.load(f)
        else:
            shutil.rmtree(workdir, ignore_errors=True)    # left by a run that raised
            os.makedirs(workdir)
            results = train.train_and_evaluate(config, workdir)
            with open(done + ".tmp", "wb") as f:
                pickle.dump(results, f)
            os.replace(done + ".tmp", done)
    _RUNS[key] = (workdir, results)
    return _RUNS[key]
