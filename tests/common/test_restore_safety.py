"""Restores never lose progress: an intact checkpoint that does not fit the model is refused
without moving anything, only unreadable steps go to checkpoints_damaged/, and a workdir
whose progress no checkpoint restores refuses every rerun until --restart, which moves the
old run into restarted_<UTC time>/ (nothing deleted). metrics.jsonl is never emptied."""
import glob
import json
import os
import re
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import metrics
from lib.common import train_loop
from lib.common import workdir as wd
from lib.common.checkpoint import CheckpointMismatch, Checkpointer
from tests.common import harness_utils as hu
from tests.common import regression_app as app


def _train(workdir, num_steps=20, **overrides):
    """The regression app's tiny task trained in-process (checkpoints every 10 steps)."""
    config = config_lib.apply_overrides(app.get_config("tiny"),
                                        {"train.num_steps": num_steps, **overrides})
    return train_loop.train(app.make_task(config), train_loop.LoopConfig.from_config(config.train),
                            workdir=workdir, mesh=mesh_lib.make_mesh())


def _tree(root):
    """{relative path: bytes} of every file under `root` (what must survive untouched)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "**"), recursive=True)):
        if os.path.isfile(path):
            out[os.path.relpath(path, root)] = open(path, "rb").read()
    return out


@pytest.fixture
def restart_allowed():
    wd.allow_restart(True)
    yield
    wd.allow_restart(False)


def test_a_checkpoint_of_another_shape_is_refused_naming_the_leaves_and_moves_nothing(tmp_path):
    workdir = str(tmp_path)
    _train(workdir)
    before = _tree(workdir)
    with pytest.raises(CheckpointMismatch) as err:
        _train(workdir, 30, **{"model.hidden": 48})              # the code/config changed
    msg = str(err.value)
    assert "\n" not in msg and "checkpoint step 20" in msg and "nothing was moved" in msg
    assert "params.params.Dense_0.kernel: stored (8, 32) float32, the model has (8, 48) float32" in msg
    assert "and " in msg and "more leaves" in msg               # Adam's mu/nu differ as well
    assert _tree(workdir) == before                                # nothing moved or rewritten
    assert not os.path.exists(os.path.join(workdir, "checkpoints_damaged"))


def test_a_changed_dtype_or_a_new_leaf_is_named(tmp_path):
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1)
    state = {"w": jnp.ones((2, 3)), "step": jnp.int32(4)}
    ckpt.save(4, state, wait=True)
    with pytest.raises(CheckpointMismatch, match=r"step: stored \(\) int32, the model has \(\) "
                                                 r"float32"):
        ckpt.restore_latest({**state, "step": jnp.float32(4)})
    with pytest.raises(CheckpointMismatch, match=r"ema: not in the checkpoint, the model has "
                                                 r"\(3,\) float32"):
        ckpt.restore_latest({**state, "ema": jnp.ones(3)})
    with pytest.raises(CheckpointMismatch, match=r"w: stored \(2, 3\) float32, not in the model"):
        ckpt.restore_latest({"step": state["step"]})
    assert ckpt.all_steps() == [4]
    restored, step = ckpt.restore_latest(state)
    assert step == 4 and np.array_equal(restored["w"], state["w"])
    ckpt.close()


def test_a_readable_step_whose_restore_fails_otherwise_is_not_moved(tmp_path):
    # Out of memory, a sharding problem...: the files read back, so the step stays.
    ckpt = Checkpointer(str(tmp_path / "c"), save_every=1)
    state = {"w": jnp.arange(6.0)}
    ckpt.save(1, state, wait=True)
    real_restore, calls = ckpt._manager.restore, []

    def failing_once(step, args=None):
        calls.append(step)
        if len(calls) == 1:
            raise RuntimeError("RESOURCE_EXHAUSTED: out of memory while restoring")
        return real_restore(step, args=args)

    ckpt._manager.restore = failing_once
    with pytest.raises(RuntimeError, match="RESOURCE_EXHAUSTED"):
        ckpt.restore_latest(state)
    assert ckpt.all_steps() == [1] and not os.path.exists(str(tmp_path / "c_damaged"))
    ckpt.close()


def test_checkpoints_gone_with_metrics_rows_refuse_until_restart(tmp_path):
    workdir = str(tmp_path)
    _train(workdir)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), {"step": 20})
    shutil.rmtree(os.path.join(workdir, wd.CHECKPOINTS))
    before = _tree(workdir)
    messages = []
    for _ in range(2):                                  # every rerun: the same refusal
        with pytest.raises(wd.RestartRequired) as err:
            _train(workdir, 30)
        messages.append(str(err.value))
    assert messages[0] == messages[1] and "\n" not in messages[0]
    assert "metrics.jsonl has 4 row(s) up to step 20" in messages[0]
    assert "Rerun with --restart" in messages[0]
    assert _tree(workdir) == before                      # metrics.jsonl not emptied


def test_restart_moves_the_old_run_aside_and_starts_fresh(tmp_path, restart_allowed):
    workdir = str(tmp_path)
    _train(workdir)
    wd.write_json_atomic(os.path.join(workdir, wd.CONFIG), {"a": 1})
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), {"step": 20})
    wd.write_text_atomic(os.path.join(workdir, "results.md"), "| 20 |\n")
    shutil.move(os.path.join(workdir, wd.CHECKPOINTS, "20"),
                os.path.join(workdir, "checkpoints_damaged", "20"))      # as an unreadable one
    shutil.rmtree(os.path.join(workdir, wd.CHECKPOINTS))
    old = _tree(workdir)
    result = _train(workdir, 10)
    assert result.resumed_from == 0 and result.step == 10
    (archive,) = glob.glob(os.path.join(workdir, "restarted_*"))
    assert len(os.path.basename(archive)) == len("restarted_20261201T234500Z")
    moved = _tree(archive)
    for name, data in old.items():                       # every old file kept, byte for byte
        assert moved[name] == data, name
    assert json.load(open(os.path.join(workdir, wd.CONFIG))) == {"a": 1}   # copied, kept
    assert not os.path.exists(os.path.join(workdir, wd.RESULTS))
    assert not os.path.exists(os.path.join(workdir, "checkpoints_damaged"))
    assert [r["step"] for r in metrics.read_metrics(workdir)] == [5, 10]


def test_restart_changes_nothing_in_a_workdir_that_resumes(tmp_path, restart_allowed):
    workdir = str(tmp_path)
    _train(workdir)
    result = _train(workdir, 30)
    assert result.resumed_from == 20 and not glob.glob(os.path.join(workdir, "restarted_*"))


def test_lost_progress_names_each_kind_of_evidence(tmp_path):
    workdir = str(tmp_path)
    assert wd.lost_progress(workdir) == []
    with open(os.path.join(workdir, wd.METRICS), "w") as f:
        f.write(json.dumps({"step": 0, "val_loss": 1.0}) + "\n")      # step 0 only: nothing lost
    wd.write_json_atomic(os.path.join(workdir, wd.BEST_RECORD), {"step": 0})
    os.makedirs(os.path.join(workdir, wd.BEST_CHECKPOINTS, "0"))
    assert wd.lost_progress(workdir) == []
    with open(os.path.join(workdir, wd.METRICS), "a") as f:
        f.write(json.dumps({"step": 10, "loss": 1.0}) + "\n" + '{"step": 2')  # a torn last line
    os.makedirs(os.path.join(workdir, "checkpoints_damaged", "30"))
    os.makedirs(os.path.join(workdir, "checkpoints_damaged", "30.1"))
    os.makedirs(os.path.join(workdir, wd.BEST_CHECKPOINTS, "20"))
    wd.write_json_atomic(os.path.join(workdir, wd.BEST_RECORD), {"step": 20})
    assert wd.lost_progress(workdir) == [
        "checkpoints_damaged/ holds unreadable step(s) 30, 30.1",
        "metrics.jsonl has 1 row(s) up to step 10",
        "checkpoints_best/ holds step(s) 20",
        "best.json names step 20"]
    assert (wd.BEST_CHECKPOINTS, wd.BEST_RECORD) == (train_loop.BEST_CHECKPOINTS,
                                                     train_loop.BEST_RECORD)


def test_the_metric_writer_never_empties_metrics_jsonl(tmp_path):
    w = metrics.MetricWriter(str(tmp_path), tensorboard=False)
    w.write_scalars(10, {"loss": 1.0})
    w.close()
    w = metrics.MetricWriter(str(tmp_path), tensorboard=False)   # no resume step: append
    w.write_scalars(20, {"loss": 0.5})
    w.close()
    assert [r["step"] for r in metrics.read_metrics(str(tmp_path))] == [10, 20]


@pytest.mark.slow
def test_every_step_unreadable_refuses_each_rerun_until_restart(tmp_path):
    """Through the binary: the damaged steps are moved aside once, then every rerun exits 2
    with the same line, and --restart starts fresh with the old run kept."""
    workdir = str(tmp_path)
    first = hu.run_app(workdir, "tiny")                          # checkpoints 40, 50, 60
    assert first.returncode == 0, first.stderr[-3000:]
    for step in ("40", "50", "60"):
        for path in glob.glob(os.path.join(workdir, "checkpoints", step, "**"), recursive=True):
            if os.path.isfile(path) and "/d/" in path:
                with open(path, "r+b") as f:
                    f.truncate(os.path.getsize(path) // 2)
    rows = open(os.path.join(workdir, wd.METRICS)).read()
    lines = []
    for _ in range(2):
        proc = hu.run_app(workdir, "tiny")
        assert proc.returncode == 2, proc.stderr[-3000:]
        # One error line, no traceback of it. (Orbax's failed reads of the damaged steps
        # can leave "Event loop is closed" tracebacks of tensorstore callbacks at exit,
        # written by another thread, which can cut into the middle of our line.)
        found = re.findall(r"workdir error: .*?or use a new --workdir", proc.stderr)
        assert len(found) == 1, proc.stderr[-3000:]
        line = found[0]
        assert "RestartRequired" not in proc.stderr and "lib/common" not in proc.stderr
        lines.append(line)
        assert sorted(os.listdir(os.path.join(workdir, "checkpoints_damaged"))) == ["40", "50", "60"]
        assert open(os.path.join(workdir, wd.METRICS)).read() == rows
    assert lines[0] == lines[1]
    assert lines[0].startswith(f"workdir error: workdir {workdir!r} holds progress that no "
                               "checkpoint restores (checkpoints_damaged/ holds unreadable "
                               "step(s) 40, 50, 60; metrics.jsonl has 12 row(s) up to step 60; "
                               "results.json present)")
    proc = hu.run_app(workdir, "tiny", "--restart")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.load(open(os.path.join(workdir, wd.RESULTS))) == {"resumed_from": 0, "step": 60}
    (archive,) = glob.glob(os.path.join(workdir, "restarted_*"))
    assert open(os.path.join(archive, wd.METRICS)).read() == rows
    assert sorted(os.listdir(os.path.join(archive, "checkpoints_damaged"))) == ["40", "50", "60"]


def test_a_run_stopped_before_its_first_checkpoint_is_archived_without_asking(tmp_path):
    """Only metrics rows (killed before the first checkpoint): a fresh start loses nothing,
    so the rows are moved into restarted_<time>/ (never emptied) and training starts."""
    workdir = str(tmp_path)
    _train(workdir)
    shutil.rmtree(os.path.join(workdir, wd.CHECKPOINTS))
    rows = metrics.read_metrics(workdir)
    _train(workdir, 20)
    archived = [d for d in os.listdir(workdir) if d.startswith(wd.RESTARTED_PREFIX)]
    assert len(archived) == 1
    assert metrics.read_metrics(os.path.join(workdir, archived[0])) == rows
    assert [r["step"] for r in metrics.read_metrics(workdir)] == [r["step"] for r in rows]
    assert os.listdir(os.path.join(workdir, wd.CHECKPOINTS))           # trained again
