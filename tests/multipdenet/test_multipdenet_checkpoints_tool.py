"""tools/multipdenet_checkpoints.py on a tiny Navier–Stokes run (subprocesses: the tool's
absl flags would clash with the harness's in this worker).

The run integrates with forward Euler: the tool scores a run's checkpoints the same way
whatever its integrator, and Euler's train step and rollouts trace and compile in about
half of RK4's time."""
import json
import os
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from experiments.multipdenet import train
from lib.multipdenet.runs import load_run
from tests import experiment_runs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(*args):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_every_kept_step_is_scored_and_a_missing_step_is_one_line(tmp_path_factory, tmp_path):
    data = str(tmp_path / "data")
    run, _ = experiment_runs.tiny_run(tmp_path_factory, train, "configs/multipdenet/navier_stokes.py:tiny",
                                      overrides={"data_root": data, "eval.plots": False,
                                                 "model.integrator": "euler"})
    out = tmp_path / "ck.json"
    proc = _run("tools/multipdenet_checkpoints.py", f"--workdir={run}", "--truth=front_tiny",
                f"--data_root={data}", f"--out={out}", f"--reference={run}@4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["step"] for r in rows] == sorted(int(s) for s in os.listdir(os.path.join(run, "checkpoints")))
    last = rows[-1]
    assert last["paired_diff"] == 0 and last["ics_above"] == 0          # the reference itself
    # the window RMSE of the test split, recomputed here from the run's own rollout
    r = load_run(run, data, step=4)
    d = np.asarray(r.data["test"])
    pred = np.moveaxis(np.asarray(r.emulator.rollout(r.params, jnp.asarray(d[:, 0]), last["window"])), 0, 1)
    assert last["test_window"] == pytest.approx(np.sqrt(np.mean((pred - d[:, 1:last["window"] + 1]) ** 2)), rel=1e-5)
    assert (tmp_path / "ck.md").read_text().startswith("| run | step |")
    bad = _run("tools/multipdenet_checkpoints.py", f"--workdir={run}@3", "--truth=front_tiny",
               f"--data_root={data}", f"--out={tmp_path / 'bad.json'}")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1] == f"{run}: step 3 is not kept; kept: [2, 4]"
    assert not (tmp_path / "bad.json").exists()
