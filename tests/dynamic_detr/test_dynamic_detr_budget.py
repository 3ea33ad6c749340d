"""The wall-clock budget of a dynamic_detr run (`run.time_budget_s`, on the harness deadline of
`train_loop.train`): a stage stops at the predicted step and records it, a stage past its
deadline runs nothing, a rerun resumes to the configured steps, and the shares of the time
left add up."""
import time

import jax.numpy as jnp
import optax
import pytest

from configs.dynamic_detr import dynamic_detr as cfg
from lib.dynamic_detr import runs
from lib.common import mesh as mesh_lib, train_loop
from lib.common.config import ConfigError


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
    ticks = iter(range(10**6))                 # a clock that advances 1 s per reading
    r, rec = runs.run_stage(_quadratic_task(), config, 10_000, d, mesh, 10.0,
                            clock=lambda: float(next(ticks)))
    assert rec["stopped_by_budget"]
    # one clock reading per step, at t = 0, 1, ...: a step starting at t ends at t + 1, so the
    # steps starting at t = 0..9 fit the deadline 10 and the one at t = 10 does not
    assert rec["steps"] == 10 and rec["steps"] == r.step and rec["resumed_from"] == 0
    stopped_at = rec["steps"]
    r, rec = runs.run_stage(_quadratic_task(), config, stopped_at + 5, d, mesh, None)
    assert rec == {**rec, "steps": stopped_at + 5, "resumed_from": stopped_at, "stopped_by_budget": False}
    assert int(r.state["step"]) == stopped_at + 5


def test_a_stage_past_its_deadline_runs_no_step(tmp_path):
    config = cfg.get_config("tiny")
    r, rec = runs.run_stage(_quadratic_task(), config, 100, str(tmp_path / "s"),
                            mesh_lib.make_mesh(-1, 1), time.time() - 1.0)
    assert rec["stopped_by_budget"] and rec["steps"] == 0 and int(r.state["step"]) == 0


def test_finetune_shares_split_the_time_left():
    assert runs.finetune_deadline(None, 100.0, 3, 5.0) is None
    now, end = 100.0, 190.0
    first = runs.finetune_deadline(end, now, 3, 5.0)
    assert first == pytest.approx(100 + 30 - 5)
    # a stage that ends on time leaves the same share to each of the others
    second = runs.finetune_deadline(end, first + 5.0, 2, 5.0)
    assert second == pytest.approx(first + 5.0 + 30 - 5)


def test_a_finetune_starts_only_with_room_for_compile_and_evaluation():
    assert runs.finetune_fits(None, 1e12, 5.0)
    assert runs.finetune_fits(100.0, 80.0, 5.0) and runs.finetune_fits(100.0, 89.9, 5.0)
    assert not runs.finetune_fits(100.0, 90.0, 5.0) and not runs.finetune_fits(100.0, 120.0, 0.0)


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
