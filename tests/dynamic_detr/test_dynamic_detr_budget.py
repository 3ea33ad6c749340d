"""The wall-clock budget of a dynamic_detr run (`run.time_budget_s`): the timer's signals
stop `train_loop.train` at the next step and never kill the process, the stage records the
stop, a rerun resumes to the configured steps, and the shares of the time left add up."""
import os
import signal
import time

import jax.numpy as jnp
import optax
import pytest

from configs.dynamic_detr import dynamic_detr as cfg
from experiments.dynamic_detr import train
from lib.common import mesh as mesh_lib, train_loop
from lib.common.config import ConfigError
from lib.common.guards import PreemptionGuard


def test_timer_stops_a_guarded_loop_and_nothing_after_it():
    with train.BudgetTimer(time.time() + 0.2, every_s=0.05) as timer:
        time.sleep(0.4)                      # deadline passes before the guard: only recorded
        with PreemptionGuard() as guard:
            t0 = time.time()
            while not guard.requested and time.time() - t0 < 5:
                time.sleep(0.01)
        assert guard.requested and time.time() - t0 < 1.0
        time.sleep(0.2)                      # more signals outside the guard: still alive
    assert timer.fired and not timer.external
    assert signal.getsignal(signal.SIGTERM) is not timer._record


def test_timer_tells_an_outside_sigterm_apart():
    with train.BudgetTimer(time.time() + 60) as timer:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
    assert timer.external and not timer.fired
    with train.BudgetTimer(None) as timer:   # no budget: nothing installed
        assert signal.getsignal(signal.SIGTERM) is not timer._record


def _quadratic_task():
    """Minimise ||w - 3||² by Adam: a task whose compile costs nothing."""
    opt = optax.adam(0.1)

    def init_state(key):
        del key
        p = {"w": jnp.zeros(4)}
        return {"params": p, "opt_state": opt.init(p), "step": jnp.int32(0)}

    def step(state, batch, key):
        del key
        grads = {"w": 2 * (state["params"]["w"] - batch["y"].mean())}
        return train_loop.apply_gradients(state, grads, opt), {"w0": state["params"]["w"][0]}

    return train_loop.Task(init_state, step, lambda s, rows: {"y": jnp.full((8,), 3.0)[rows]}, 8)


def test_stage_stops_at_the_deadline_records_it_and_resumes(tmp_path):
    config = cfg.get_config("tiny")
    mesh = mesh_lib.make_mesh(-1, 1)
    d = str(tmp_path / "stage")
    r, rec = train.run_stage(_quadratic_task(), config, 10_000, d, mesh, time.time() - 1.0)
    assert rec["stopped_by_budget"] and not r.preempted
    assert 1 <= rec["steps"] < 10_000 and rec["steps"] == r.step and rec["resumed_from"] == 0
    stopped_at = rec["steps"]
    r, rec = train.run_stage(_quadratic_task(), config, stopped_at + 5, d, mesh, None)
    assert rec == {**rec, "steps": stopped_at + 5, "resumed_from": stopped_at, "stopped_by_budget": False}
    assert int(r.state["step"]) == stopped_at + 5


def test_finetune_shares_split_the_time_left():
    assert train.finetune_deadline(None, 100.0, 3, 5.0) is None
    now, end = 100.0, 190.0
    first = train.finetune_deadline(end, now, 3, 5.0)
    assert first == pytest.approx(100 + 30 - 5)
    # a stage that ends on time leaves the same share to each of the others
    second = train.finetune_deadline(end, first + 5.0, 2, 5.0)
    assert second == pytest.approx(first + 5.0 + 30 - 5)


def test_a_finetune_starts_only_with_room_for_compile_and_evaluation():
    assert train.finetune_fits(None, 1e12, 5.0)
    assert train.finetune_fits(100.0, 80.0, 5.0) and train.finetune_fits(100.0, 89.9, 5.0)
    assert not train.finetune_fits(100.0, 90.0, 5.0) and not train.finetune_fits(100.0, 120.0, 0.0)


def test_budget_needs_the_constant_schedule():
    config = cfg.get_config("tiny")
    config.run.time_budget_s = 10.0
    with pytest.raises(ConfigError, match="optim.schedule"):
        cfg.validate(config)
    config.optim.schedule = "constant"
    cfg.validate(config)
    config.run.time_budget_s = -1.0
    with pytest.raises(ConfigError, match="run.time_budget_s"):
        cfg.validate(config)
