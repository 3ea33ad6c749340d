"""The wall-clock budget (lib/maxentdp/budget.py): a run stops at a loop-step boundary when
the next step would end after the deadline, records it, and resumes exactly.

A fake clock advances 10 s per loop step (read by the task's `batch_fn`), so the stop is
deterministic; the task is a tiny counter state, so nothing here is RL-specific.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import mesh as mesh_lib, metrics as metrics_lib, train_loop
from lib.maxentdp import budget as budget_lib

STEPS = 4


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _task(clock):
    def batch_fn(step, rows):
        clock.t += 10.0                      # every loop step "takes" 10 s
        return np.full((1,), step, np.int32)[rows]

    def train_step(state, batch, key):
        x = state["x"] * 1.5 + jax.random.uniform(key) + batch[0]
        return {"x": x, "n": state["n"] + 1}, {"x": x}

    return train_loop.Task(init_state=lambda k: {"x": jnp.zeros(()), "n": jnp.zeros((), jnp.int32)},
                           train_step=train_step, batch_fn=batch_fn, global_batch_size=1)


def _loop():
    return train_loop.LoopConfig(num_steps=STEPS, log_every=1, checkpoint_every=1,
                                 keep_checkpoints=1, seed=3)


@pytest.fixture
def mesh(monkeypatch):
    # No TensorBoard writer: importing it (tensorboardX -> torch) costs ~10 s on this CPU
    # and is not what these tests are about.
    monkeypatch.setattr(metrics_lib, "_tensorboard_writer", lambda path: None)
    return mesh_lib.make_mesh(1, 1, devices=jax.local_devices()[:1])


def test_budget_stops_at_a_step_boundary_records_and_resumes(tmp_path, mesh):
    clock = FakeClock()
    seen = []
    # Deadline 25 s: steps end at 10 and 20 s (the clock ticks in batch_fn); before the 3rd
    # the 5 s left are less than the last step's 10 s, so the run stops after 2 steps.
    res = budget_lib.train_budgeted(_task(clock), _loop(), workdir=str(tmp_path), mesh=mesh,
                                    budget=budget_lib.Budget(25.0, clock), on_step=seen.append)
    assert res.stopped and not res.preempted
    assert res.step == 2 and int(res.state["n"]) == 2 and res.resumed_from == 0
    assert seen == [1, 2]
    # Rerun without a budget: resumes at step 2 and runs the remaining steps only.
    res2 = budget_lib.train_budgeted(_task(FakeClock()), _loop(), workdir=str(tmp_path),
                                     mesh=mesh, budget=budget_lib.Budget(None))
    assert (res2.resumed_from, res2.step, res2.stopped) == (2, STEPS, False)
    assert int(res2.state["n"]) == STEPS


def test_budget_spent_before_start(tmp_path, mesh):
    res = budget_lib.train_budgeted(_task(FakeClock()), _loop(), workdir=str(tmp_path),
                                    mesh=mesh, budget=budget_lib.Budget(-1.0, FakeClock()))
    assert res.state is None and res.step == 0 and res.stopped


def test_budget_needs_a_checkpoint_every_step(tmp_path, mesh):
    loop = train_loop.LoopConfig(num_steps=STEPS, log_every=1, checkpoint_every=2)
    with pytest.raises(ValueError, match="checkpoint_every == 1"):
        budget_lib.train_budgeted(_task(FakeClock()), loop, workdir=str(tmp_path), mesh=mesh,
                                  budget=budget_lib.Budget(10.0, FakeClock()))


def test_budget_shares_and_partial_results(tmp_path):
    """train.py's share of the process budget per run, and the results entry written from
    metrics.jsonl while a run is going on."""
    import json
    import time

    from experiments.maxentdp import train
    from lib.common.config import load_config

    config = load_config("configs/maxentdp/maxentdp.py:gpu")      # 330 s, shares 0.7 / 0.3
    pairs = [("hopper", "maxentdp"), ("hopper", "sac")]
    start = time.monotonic()
    first = train.run_budget(config, pairs, start).deadline - start
    assert abs(first - 0.7 * 330) < 1.0
    last = train.run_budget(config, pairs[1:], start - 300).deadline - start   # 30 s left
    assert abs(last - 30) < 1.0
    config.run.time_budget_s = None
    assert train.run_budget(config, pairs, start).deadline is None

    run = train.run_config(config, "hopper")._replace(num_seeds=2)
    rows = [{"step": i + 1, "alpha": 0.05, "eval_return_seed0": 10.0 * i,
             "eval_return_seed1": 10.0 * i + 2} for i in range(3)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    entry = train.partial_record(str(tmp_path), "hopper", "maxentdp", run, wall=5.0)
    assert entry["env_steps"] == [2000, 4000, 6000] and entry["in_progress"]
    assert entry["eval_return"] == [[0.0, 10.0, 20.0], [2.0, 12.0, 22.0]]
    assert entry["final_return_mean"] == 21.0 and entry["planned_env_steps"] == 100_000
