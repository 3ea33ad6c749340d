"""Helpers for the harness tests: run the regression app as a subprocess and poll it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regression_app.py")


def app_cmd(workdir: str, variant: str = "tiny", *extra: str) -> list[str]:
    return [sys.executable, APP, f"--config={APP}:{variant}", f"--workdir={workdir}", *extra]


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(extra)
    return env


def run_app(workdir: str, variant: str = "tiny", *extra: str, timeout: float = 120,
            env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(app_cmd(workdir, variant, *extra), capture_output=True, text=True,
                          timeout=timeout, env=env or clean_env())


def last_logged_step(workdir: str) -> int:
    path = os.path.join(workdir, "metrics.jsonl")
    if not os.path.exists(path):
        return -1
    step = -1
    with open(path) as f:
        for line in f:
            try:
                step = max(step, json.loads(line)["step"])
            except (json.JSONDecodeError, KeyError):
                pass
    return step


def start_and_wait_for_step(workdir: str, step: int, variant: str = "long",
                            timeout: float = 120) -> subprocess.Popen:
    """Start the app and return once it has logged `step` (or fail the test)."""
    proc = subprocess.Popen(app_cmd(workdir, variant), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=clean_env())
    t0 = time.monotonic()
    while last_logged_step(workdir) < step:
        if proc.poll() is not None:
            raise AssertionError(f"run ended before step {step}: {proc.stderr.read()[-2000:]}")
        if time.monotonic() - t0 > timeout:
            proc.kill()
            raise AssertionError(f"run did not reach step {step} in {timeout}s")
        time.sleep(0.01)
    return proc


def final_params(workdir: str) -> list[np.ndarray]:
    with np.load(os.path.join(workdir, "final_params.npz")) as z:
        return [z[k] for k in sorted(z.files, key=lambda s: int(s.split("_")[1]))]


_ABSL_LOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")


def non_log_lines(stderr: str) -> list[str]:
    """The lines of a binary's stderr that are not absl log lines (`I1201 23:48:24.96 123
    file.py:849] ...`, e.g. JAX's backend probing): what the program itself printed."""
    return [line for line in stderr.splitlines() if line.strip() and not _ABSL_LOG.match(line)]
