"""The wall-clock budget of a MaxEntDP run (`train_one` on `train_loop.train`'s deadline):
a run stops at a chunk boundary when the next chunk would end after its deadline, writes
progressive results after every chunk, is recorded as budget-stopped, and resumes exactly.

`training.make_task` is replaced by a counter task with the state layout `train_one` reads
(chunk counter, per-chunk evaluations, per-seed log α) and a fake clock that advances 10 s
per chunk, so the stop is deterministic and nothing RL-specific is compiled. The deadline
mechanism itself is tested in tests/common/test_deadline.py.
"""
import json
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.maxentdp import runs, training
from lib.common import mesh as mesh_lib, metrics as metrics_lib, train_loop
from lib.common.config import load_config

SEEDS = 2


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _config():
    config = load_config("configs/maxentdp/maxentdp.py:tiny")
    config.env.pendulum.update(num_seeds=SEEDS, env_steps=240, eval_every=60)   # 4 chunks
    return config


def _fake_make_task(clock):
    def make_task(config, env_name, algo):
        run = training.run_config(config, env_name)

        def init_state(key):
            return {"chunk": jnp.zeros((), jnp.int32),
                    "evals": jnp.zeros((run.num_chunks, SEEDS)),
                    "seeds": {"agent": {"log_alpha": jnp.zeros((SEEDS,))}}}

        def train_step(state, batch, key):
            c = state["chunk"]
            ev = 10.0 * c + jnp.arange(SEEDS) + jax.random.uniform(key)
            metrics = {f"eval_return_seed{i}": ev[i] for i in range(SEEDS)}
            return ({**state, "chunk": c + 1, "evals": state["evals"].at[c].set(ev)},
                    {**metrics, "alpha": jnp.float32(1.0)})

        def batch_fn(step, rows):
            clock.t += 10.0
            return np.full((1,), step, np.int32)[rows]

        return None, None, run, train_loop.Task(init_state, train_step, batch_fn, 1)
    return make_task


@pytest.fixture
def mesh(monkeypatch):
    # No TensorBoard writer: importing it (tensorboardX -> torch) costs ~10 s on this CPU.
    monkeypatch.setattr(metrics_lib, "_tensorboard_writer", lambda path: None)
    return mesh_lib.make_mesh(1, 1, devices=jax.local_devices()[:1])


def test_budget_stops_at_a_chunk_boundary_records_and_resumes(tmp_path, mesh, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(runs, "make_task", _fake_make_task(clock))
    config, workdir, seen = _config(), str(tmp_path), []
    # Deadline 35 s: chunks end at 10, 20, 30 s; the first (compiling) chunk is not timed,
    # so before the 4th the 5 s left are less than a chunk's 10 s: stop after 3 chunks.
    entry = runs.train_one(config, workdir, "pendulum", "maxentdp", mesh, deadline=35.0,
                           on_progress=seen.append, clock=clock)
    assert entry["budget_stopped"] and entry["resumed_from"] == 0 and "preempted" not in entry
    assert entry["env_steps"] == [60, 120, 180] and entry["planned_env_steps"] == 240
    # Progressive results after every chunk, from metrics.jsonl, agree with the state's.
    assert [e["env_steps"] for e in seen] == [[60], [60, 120], [60, 120, 180]]
    assert all(e["in_progress"] for e in seen)
    np.testing.assert_allclose(seen[-1]["eval_return"], entry["eval_return"], rtol=1e-6)
    # Rerun without a budget: resumes after chunk 3 and ends equal to an uninterrupted run.
    again = runs.train_one(config, workdir, "pendulum", "maxentdp", mesh)
    assert (again["resumed_from"], again["budget_stopped"]) == (3, False)
    full = runs.train_one(config, str(tmp_path / "full"), "pendulum", "maxentdp", mesh)
    assert again["env_steps"] == full["env_steps"] == [60, 120, 180, 240]
    assert again["eval_return"] == full["eval_return"]


def test_budget_spent_before_start_records_an_unstarted_run(tmp_path, mesh, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(runs, "make_task", _fake_make_task(clock))
    entry = runs.train_one(_config(), str(tmp_path), "pendulum", "sac", mesh, deadline=-1.0,
                           clock=clock)
    assert entry["budget_stopped"] and entry["env_steps"] == [] and entry["final_alpha"] == []
    assert clock.t == 0.0                                     # no chunk was started


def test_budget_shares_and_partial_results(tmp_path):
    """The share of the process budget per run (`runs.run_deadline`), and the results entry
    written from metrics.jsonl while a run is going on."""
    config = load_config("configs/maxentdp/maxentdp.py:gpu")      # 330 s, shares 0.7 / 0.3
    pairs = [("hopper", "maxentdp"), ("hopper", "sac")]
    start = time.monotonic()
    first = runs.run_deadline(config, pairs, start) - start
    assert abs(first - 0.7 * 330) < 1.0
    last = runs.run_deadline(config, pairs[1:], start - 300) - start   # 30 s left
    assert abs(last - 30) < 1.0
    config.run.time_budget_s = None
    assert runs.run_deadline(config, pairs, start) is None

    run = training.run_config(config, "hopper")._replace(num_seeds=2)
    rows = [{"step": i + 1, "alpha": 0.05, "eval_return_seed0": 10.0 * i,
             "eval_return_seed1": 10.0 * i + 2} for i in range(3)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    entry = runs.partial_record(str(tmp_path), "hopper", "maxentdp", run, wall=5.0)
    assert entry["env_steps"] == [2000, 4000, 6000] and entry["in_progress"]
    assert entry["eval_return"] == [[0.0, 10.0, 20.0], [2.0, 12.0, 22.0]]
    assert entry["final_return_mean"] == 21.0 and entry["planned_env_steps"] == 100_000
