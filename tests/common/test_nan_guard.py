"""A NaN in the loss stops the run naming the step and metric; the last good checkpoint restores."""
import math
import os

import jax
import numpy as np
import pytest

from lib.common import config as config_lib
from lib.common.checkpoint import Checkpointer
from lib.common.guards import NonFiniteError, assert_finite
from tests.common import harness_utils as hu
from tests.common import regression_app as app


def test_injected_nan_stops_run_and_keeps_last_good_checkpoint(tmp_path):
    workdir = str(tmp_path)
    config = config_lib.apply_overrides(app.get_config("tiny"), {"debug.nan_at_step": 35})
    with pytest.raises(NonFiniteError, match=r"metric 'loss' is nan at step 35; the last good checkpoint is step 30"):
        app.train_and_evaluate(config, workdir)
    ckpt_dir = os.path.join(workdir, "checkpoints")
    steps = sorted(int(s) for s in os.listdir(ckpt_dir) if s.isdigit())
    assert steps == [10, 20, 30]
    assert not os.path.exists(os.path.join(workdir, "results.json"))
    task = app.make_task(config)
    abstract = jax.eval_shape(task.init_state, jax.random.key(0))
    ckpt = Checkpointer(ckpt_dir, save_every=10)
    state, step = ckpt.restore_latest(abstract)
    ckpt.close()
    assert step == 30 and int(state["step"]) == 30
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(state))


def test_assert_finite_messages():
    assert_finite(3, {"loss": 1.0, "acc": 0.5})
    with pytest.raises(NonFiniteError, match=r"metric 'grad_norm' is inf at step 7; no checkpoint"):
        assert_finite(7, {"loss": 1.0, "grad_norm": math.inf})


def test_a_nan_stop_through_the_cli_is_one_line_and_exit_2(tmp_path):
    proc = hu.run_app(str(tmp_path / "w"), "tiny", "--config.debug.nan_at_step=35")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert hu.non_log_lines(proc.stderr) == [
        "training stopped: metric 'loss' is nan at step 35; the last good checkpoint is step 30"]
