"""The wall-clock deadline of `train_loop.train`: it stops at the predicted step boundary,
checkpoints exactly the completed steps, resumes to the same parameters as an uninterrupted
run, changes nothing when None, and runs no step once the deadline has passed.

A fake clock advances in the task's `batch_fn` (called once at the start of every loop
iteration) by a scripted duration per step, so every stop is deterministic.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import mesh as mesh_lib, metrics as metrics_lib, train_loop

STEPS = 8
# Seconds each step "takes"; step 1 compiles. The loop predicts the next step from the
# longest measured iteration after the first (here 5 s from step 3 on), so with a deadline
# at 65 s: tops at 0, 50, 52, 57, 59 run; at 61 s, 61 + 5 > 65 stops after 5 steps. (The
# last step's 2 s would run 7 steps; the compile's 50 s would stop after 1.)
DURATIONS = (50.0, 2.0, 5.0, 2.0, 2.0, 2.0, 2.0, 2.0)
DEADLINE = 65.0
STOP = 5


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _task(clock: FakeClock | None = None):
    def batch_fn(step, rows):
        if clock is not None:
            clock.t += DURATIONS[step]
        return np.full((1,), step, np.float32)[rows]

    def train_step(state, batch, key):
        x = state["x"] * 0.9 + jax.random.normal(key, (3,)) + batch[0]
        return {"x": x, "n": state["n"] + 1}, {"x0": x[0]}

    return train_loop.Task(
        init_state=lambda k: {"x": jax.random.normal(k, (3,)), "n": jnp.zeros((), jnp.int32)},
        train_step=train_step, batch_fn=batch_fn, global_batch_size=1)


def _loop(checkpoint_every=100, log_every=3):
    return train_loop.LoopConfig(num_steps=STEPS, log_every=log_every,
                                 checkpoint_every=checkpoint_every, keep_checkpoints=2, seed=5)


@pytest.fixture(scope="module")
def mesh():
    # No TensorBoard writer: importing it (tensorboardX -> torch) is slow and not tested here.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(metrics_lib, "_tensorboard_writer", lambda path: None)
        yield mesh_lib.make_mesh(1, 1, devices=jax.local_devices()[:1])


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, mesh):
    res = train_loop.train(_task(), _loop(), workdir=str(tmp_path_factory.mktemp("full")),
                           mesh=mesh)
    assert res.step == STEPS and not res.stopped_by_deadline
    return np.asarray(res.state["x"])


def _checkpoint_steps(workdir):
    return sorted(int(s) for s in os.listdir(os.path.join(workdir, "checkpoints")) if s.isdigit())


def test_stops_at_predicted_step_checkpoints_it_and_resumes_exactly(tmp_path, mesh,
                                                                    uninterrupted):
    workdir = str(tmp_path)
    clock, logged = FakeClock(), []
    res = train_loop.train(_task(clock), _loop(), workdir=workdir, mesh=mesh,
                           deadline=DEADLINE, clock=clock, on_log=logged.append)
    assert res.stopped_by_deadline
    assert res.step == STOP and int(res.state["n"]) == STOP and clock.t == 61.0
    # checkpoint_every=100: the stop itself saved exactly the completed steps.
    assert _checkpoint_steps(workdir) == [STOP]
    state, step = train_loop.restore_trained(_task(), workdir, seed=5, mesh=mesh)
    assert step == STOP and int(state["n"]) == STOP
    np.testing.assert_array_equal(state["x"], res.state["x"])
    # Metrics of the unlogged steps 4-5 were checked and written at the stop, marked.
    rows = metrics_lib.read_metrics(workdir)
    assert [r["step"] for r in rows] == [3, STOP] and rows[-1]["stopped_by_deadline"] == 1
    assert logged == [3, STOP]
    # Resumed with its deadline passed: restores, runs nothing, keeps its checkpoint.
    again = train_loop.train(_task(clock), _loop(), workdir=workdir, mesh=mesh,
                             deadline=0.0, clock=clock)
    assert (again.step, again.resumed_from, again.stopped_by_deadline) == (STOP, STOP, True)
    assert _checkpoint_steps(workdir) == [STOP] and clock.t == 61.0
    assert len(metrics_lib.read_metrics(workdir)) == 2
    # Rerun without a deadline: resumes at the stop and ends where an uninterrupted run does.
    res2 = train_loop.train(_task(), _loop(), workdir=workdir, mesh=mesh)
    assert (res2.resumed_from, res2.step, res2.stopped_by_deadline) == (STOP, STEPS, False)
    np.testing.assert_array_equal(np.asarray(res2.state["x"]), uninterrupted)


def test_no_deadline_changes_nothing(tmp_path, mesh, uninterrupted):
    for name, kw in (("none", {"deadline": None}), ("far", {"deadline": 1e9})):
        res = train_loop.train(_task(FakeClock()), _loop(), workdir=str(tmp_path / name),
                               mesh=mesh, clock=FakeClock(), **kw)
        assert res.step == STEPS and not res.stopped_by_deadline
        np.testing.assert_array_equal(np.asarray(res.state["x"]), uninterrupted)
        rows = metrics_lib.read_metrics(str(tmp_path / name))
        assert not any("stopped_by_deadline" in r for r in rows)


def test_deadline_already_passed_runs_no_step(tmp_path, mesh, caplog):
    workdir = str(tmp_path)
    clock = FakeClock()
    clock.t = 10.0
    res = train_loop.train(_task(clock), _loop(), workdir=workdir, mesh=mesh,
                           deadline=10.0, clock=clock)
    assert res.stopped_by_deadline and res.step == 0 and res.resumed_from == 0
    assert clock.t == 10.0                          # batch_fn never called
    assert int(res.state["n"]) == 0 and _checkpoint_steps(workdir) == []
    assert "deadline: no step run" in caplog.text
    assert metrics_lib.read_metrics(workdir) == []
