"""One preemption mechanism: SIGTERM anywhere ends in `guards.Preempted` (exit 0 from the
command line) after the checkpoint of exactly the completed steps, and nothing runs or is
published after it; the same command resumes."""
import json
import os
import signal

import numpy as np
import pytest

from lib.common import guards, mesh as mesh_lib, train_loop
from tests.common import preemption_e2e as e2e
from tests.common import regression_app as app


@pytest.fixture
def sigterm_state(monkeypatch):
    """A fresh 'no SIGTERM seen' state; the process's SIGTERM handler restored afterwards."""
    monkeypatch.setattr(guards, "_SEEN", False)
    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def _task_with_sigterm_at(task: train_loop.Task, at: int) -> train_loop.Task:
    def batch_fn(step, rows):
        if step == at:
            os.kill(os.getpid(), signal.SIGTERM)
        return task.batch_fn(step, rows)
    return task._replace(batch_fn=batch_fn)


def _setup(num_steps=30):
    config = app.get_config("tiny")
    cfg = train_loop.LoopConfig(num_steps=num_steps, log_every=5, checkpoint_every=100)
    return app.make_task(config), cfg, mesh_lib.make_mesh()


def _checkpoint_steps(workdir):
    folder = os.path.join(workdir, "checkpoints")
    return sorted(int(s) for s in os.listdir(folder) if s.isdigit())


def test_sigterm_in_train_raises_preempted_after_the_checkpoint_of_the_completed_steps(
        tmp_path, sigterm_state):
    task, cfg, mesh = _setup()
    guards.install_preemption_handler()
    with pytest.raises(guards.Preempted) as err:
        train_loop.train(_task_with_sigterm_at(task, 7), cfg, workdir=str(tmp_path), mesh=mesh)
    # step index 7 was in flight: it finishes, so 8 steps are done and saved (no periodic
    # checkpoint before: checkpoint_every = 100)
    assert _checkpoint_steps(tmp_path) == [8]
    folder = os.path.join(str(tmp_path), "checkpoints")
    assert f"step 8 of 30 in {folder}" in str(err.value)
    rows = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert rows[-1]["step"] == 8
    assert guards.preemption_seen()
    # the same process refuses to train again; a new one (flag cleared) resumes at step 8
    with pytest.raises(guards.Preempted, match="not starting training in"):
        train_loop.train(task, cfg, workdir=str(tmp_path), mesh=mesh)
    guards._SEEN = False
    resumed = train_loop.train(task, cfg, workdir=str(tmp_path), mesh=mesh)
    assert resumed.resumed_from == 8 and resumed.step == 30


def test_sigterm_during_the_last_step_still_stops_what_follows(tmp_path, sigterm_state):
    task, cfg, mesh = _setup(num_steps=6)
    with pytest.raises(guards.Preempted, match="step 6 of 6"):
        train_loop.train(_task_with_sigterm_at(task, 5), cfg, workdir=str(tmp_path), mesh=mesh)
    assert _checkpoint_steps(tmp_path) == [6]


def test_on_log_is_not_called_once_sigterm_stopped_the_loop(tmp_path, sigterm_state):
    task, cfg, mesh = _setup()
    logged = []
    with pytest.raises(guards.Preempted):
        train_loop.train(_task_with_sigterm_at(task, 2), cfg, workdir=str(tmp_path), mesh=mesh,
                         on_log=logged.append)
    rows = [json.loads(line)["step"] for line in open(tmp_path / "metrics.jsonl")]
    assert rows == [3] and logged == []      # the metrics are kept; nothing is published


def test_sigterm_outside_the_train_loop_raises_and_a_second_one_is_ignored(sigterm_state):
    guards.install_preemption_handler()
    evaluated = []

    def fake_evaluation():
        for i in range(3):
            if i == 1:
                os.kill(os.getpid(), signal.SIGTERM)
            evaluated.append(i)

    with pytest.raises(guards.Preempted, match="outside the train loop"):
        fake_evaluation()
    assert evaluated == [0]
    # while the first preemption unwinds (cleanup, the exit log line), another SIGTERM
    # must not raise again and turn the clean exit into a traceback
    os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(guards.Preempted, match="not starting the evaluation"):
        guards.check_preempted("the evaluation")


def test_check_preempted_is_silent_without_sigterm_and_raises_after_one(sigterm_state):
    guards.check_preempted("stage 2")
    with guards.PreemptionGuard() as guard:          # inside the train loop: only a flag
        os.kill(os.getpid(), signal.SIGTERM)
    assert guard.requested
    with pytest.raises(guards.Preempted, match="not starting stage 2"):
        guards.check_preempted("stage 2")
    assert issubclass(guards.Preempted, BaseException)
    assert not issubclass(guards.Preempted, Exception)   # `except Exception` never eats it


APP = "tests.common.regression_app"


@pytest.mark.slow
def test_cli_exits_0_on_sigterm_in_training_and_before_publishing_and_the_rerun_resumes(
        tmp_path):
    cache = str(tmp_path / "jax_cache")
    full = str(tmp_path / "full")
    argv = lambda w: [f"--config={e2e.ROOT}/tests/common/regression_app.py:tiny",
                      f"--workdir={w}"]
    base = e2e.run(APP, None, argv(full), cache)
    assert base.returncode == 0, base.stderr[-3000:]

    work = str(tmp_path / "run")
    first = e2e.run(APP, "train:12", argv(work), cache)       # inside the train loop
    assert first.returncode == 0, first.stderr[-3000:]
    assert "preempted: SIGTERM: saved checkpoint at step 13 of 60" in first.stderr
    assert not os.path.exists(os.path.join(work, "results.json"))
    assert _checkpoint_steps(work)[-1] == 13

    # outside the loop: the training finishes, then SIGTERM as the results are written
    # (the app's first write after training is final_params.npz, then results.json)
    second = e2e.run(APP, "call:numpy:savez", argv(work), cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "outside the train loop" in second.stderr
    assert _checkpoint_steps(work)[-1] == 60
    assert not os.path.exists(os.path.join(work, "results.json"))
    assert not os.path.exists(os.path.join(work, "final_params.npz"))

    third = e2e.run(APP, None, argv(work), cache)
    assert third.returncode == 0, third.stderr[-3000:]
    assert e2e.results(work) == {"step": 60, "resumed_from": 60}
    with np.load(os.path.join(full, "final_params.npz")) as a, \
            np.load(os.path.join(work, "final_params.npz")) as b:
        assert sorted(a.files) == sorted(b.files)
        for k in a.files:
            np.testing.assert_array_equal(a[k], b[k])
