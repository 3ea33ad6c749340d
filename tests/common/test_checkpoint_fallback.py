"""A damaged latest checkpoint: resume from the previous one, say so, keep the damaged one."""
import glob
import json
import os

import jax
import numpy as np
import pytest

from lib.common.checkpoint import CheckpointMismatch, Checkpointer, NoReadableCheckpoint
from tests.common import harness_utils as hu


def _truncate_data_files(step_dir: str) -> list[str]:
    """Halve every array-data file of a step (as a save cut off mid-write would leave it)."""
    files = [f for f in glob.glob(os.path.join(step_dir, "**"), recursive=True)
             if os.path.isfile(f) and "/d/" in f]
    assert files
    for target in files:
        with open(target, "r+b") as f:
            f.truncate(os.path.getsize(target) // 2)
    return files


def test_damaged_latest_checkpoint_falls_back(tmp_path):
    # A fresh process restores (as after a crash): in-process, tensorstore's cache would
    # still hold the undamaged bytes.
    workdir = str(tmp_path)
    first = hu.run_app(workdir, "tiny")  # checkpoints 40, 50, 60
    assert first.returncode == 0, first.stderr[-3000:]
    ckpt_dir = os.path.join(workdir, "checkpoints")
    assert sorted(int(s) for s in os.listdir(ckpt_dir) if s.isdigit()) == [40, 50, 60]
    _truncate_data_files(os.path.join(ckpt_dir, "60"))

    rerun = hu.run_app(workdir, "tiny", "--config.train.num_steps=70")
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "checkpoint at step 60" in rerun.stderr
    assert "falling back to the previous checkpoint" in rerun.stderr
    assert "resumed from step 50 instead of the damaged latest step 60" in rerun.stderr
    assert os.path.isdir(os.path.join(workdir, "checkpoints_damaged", "60"))
    results = json.load(open(os.path.join(workdir, "results.json")))
    assert results == {"resumed_from": 50, "step": 70}


def test_every_checkpoint_damaged_is_an_error(tmp_path):
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1)
    state = {"w": jax.numpy.arange(1000.0)}
    ckpt.save(1, state, wait=True)
    _truncate_data_files(str(tmp_path / "c" / "1"))
    with pytest.raises(NoReadableCheckpoint, match="no checkpoint .* could be restored"):
        ckpt.restore_latest(state)
    ckpt.close()
    assert os.listdir(tmp_path / "c_damaged") == ["1"]     # moved aside, not deleted


def test_checkpoint_round_trip_keeps_values_and_dtypes(tmp_path):
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1, keep=2)
    state = {"w": jax.numpy.linspace(0, 1, 7, dtype=jax.numpy.float32),
             "step": jax.numpy.int32(5), "nested": {"b": jax.numpy.ones((2, 3), jax.numpy.bfloat16)}}
    for s in (1, 2, 3):
        ckpt.save(s, jax.tree.map(lambda x: x * s, state))
    ckpt.wait()
    assert ckpt.all_steps() == [2, 3]  # keep=2
    restored, step = ckpt.restore_latest(state)
    assert step == 3
    for a, b in zip(jax.tree.leaves(restored), jax.tree.leaves(jax.tree.map(lambda x: x * 3, state))):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
    ckpt.close()


def test_replicated_and_sharded_leaves_restore_with_their_shardings(tmp_path):
    """A replicated leaf is saved from one host copy, a sharded one by Orbax per shard; both
    restore to the same values on the target's sharding."""
    from lib.common import checkpoint
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
    replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    sharded = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    n = len(jax.devices())
    state = {"r": jax.device_put(np.arange(6.0, dtype=np.float32), replicated),
             "s": jax.device_put(np.arange(2.0 * n, dtype=np.float32), sharded)}
    host = jax.tree.map(checkpoint._host_if_replicated, state)
    assert isinstance(host["r"], np.ndarray)
    assert host["s"] is state["s"] if n > 1 else isinstance(host["s"], np.ndarray)
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1)
    ckpt.save(1, state, wait=True)
    restored, _ = ckpt.restore_latest(state)
    for key in state:
        assert restored[key].sharding == state[key].sharding
        np.testing.assert_array_equal(np.asarray(restored[key]), np.asarray(state[key]))
    ckpt.close()


def test_restore_step_reads_a_kept_step_and_names_the_kept_ones_otherwise(tmp_path):
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1, keep=2)
    for step in (1, 2, 3):
        ckpt.save(step, {"w": jax.numpy.full(4, float(step))}, wait=True)
    like = {"w": jax.numpy.zeros(4)}
    np.testing.assert_array_equal(ckpt.restore_step(like, 2)["w"], np.full(4, 2.0))
    assert ckpt.restore_latest(like)[1] == 3                       # the newest is still the default
    with pytest.raises(ValueError, match=r"step 1 is not kept .*; kept: \[2, 3\]"):
        ckpt.restore_step(like, 1)                                  # keep=2 dropped it
    with pytest.raises(CheckpointMismatch, match="step 2 .* does not match"):
        ckpt.restore_step({"w": jax.numpy.zeros(5)}, 2)
    ckpt.close()
