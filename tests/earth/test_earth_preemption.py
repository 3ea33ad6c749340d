"""EARTH under SIGTERM, end to end through its command line (tiny config with two cheap
trained models and no plots, so that one model's training or evaluation is followed by another): a
SIGTERM in the first model's training or in its evaluation exits 0 with no results.json and
no predictions.npz, and the same command then ends with the results of an uninterrupted
run."""
import os

import pytest

from tests.common import preemption_e2e as e2e

MODULE = "experiments.earth.train"
ARGV = [f"--config={e2e.ROOT}/configs/earth/earth.py:tiny", "--config.models=('linear_ar','gru')",
        "--config.eval.plots=False"]

pytestmark = pytest.mark.slow


base = e2e.base_fixture(MODULE, ARGV)


def test_sigterm_while_training_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    err = e2e.check_preempted_then_resumed(MODULE, "train:2", ARGV, str(tmp_path), cache, full)
    assert "saved checkpoint at step 3 of 6" in err and "linear_ar" in err


def test_sigterm_during_evaluation_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    err = e2e.check_preempted_then_resumed(MODULE, f"call:{MODULE}:evaluate", ARGV,
                                           str(tmp_path), cache, full)
    assert "outside the train loop" in err
    assert os.path.exists(os.path.join(tmp_path, "predictions.npz"))   # the rerun wrote it
