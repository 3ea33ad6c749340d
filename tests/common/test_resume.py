"""Resume after kill -9 and after SIGTERM ends bit-identical to an uninterrupted run."""
import json
import os
import random
import signal

import numpy as np
import pytest

from tests.common import harness_utils as hu


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("full"))
    proc = hu.run_app(workdir, "long")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return hu.final_params(workdir)


def _assert_bit_identical(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.slow
def test_kill9_then_rerun_matches_uninterrupted(tmp_path, uninterrupted):
    workdir = str(tmp_path)
    kill_at = random.Random().randrange(60, 330)
    proc = hu.start_and_wait_for_step(workdir, kill_at)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not os.path.exists(os.path.join(workdir, "results.json"))
    rerun = hu.run_app(workdir, "long")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    results = json.load(open(os.path.join(workdir, "results.json")))
    assert 0 < results["resumed_from"] <= kill_at + 20, (kill_at, results)
    _assert_bit_identical(hu.final_params(workdir), uninterrupted)
    # metrics.jsonl has no duplicated steps after the resume
    steps = [json.loads(line)["step"] for line in open(os.path.join(workdir, "metrics.jsonl"))]
    assert steps == sorted(set(steps)) and steps[-1] == 400


@pytest.mark.slow
def test_sigterm_saves_exits_cleanly_and_resumes(tmp_path, uninterrupted):
    workdir = str(tmp_path)
    proc = hu.start_and_wait_for_step(workdir, 50)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "SIGTERM: saved checkpoint at step" in err
    steps = sorted(int(s) for s in os.listdir(os.path.join(workdir, "checkpoints")) if s.isdigit())
    assert steps and steps[-1] >= 50 and steps[-1] < 400
    assert not os.path.exists(os.path.join(workdir, "results.json"))
    rerun = hu.run_app(workdir, "long")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    results = json.load(open(os.path.join(workdir, "results.json")))
    assert results["resumed_from"] == steps[-1]
    _assert_bit_identical(hu.final_params(workdir), uninterrupted)
