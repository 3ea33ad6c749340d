"""CADES under SIGTERM, end to end through its command line (tiny config, the neural TPP
only, the multivariate part, no plots): a SIGTERM in the neural TPP's training or in the evaluation
after it exits 0 with no results.json, and the same command then ends with the results of
an uninterrupted run."""
import pytest

from tests.common import preemption_e2e as e2e

MODULE = "experiments.cades.train"
# n_cal = n_test: calibration and test sequences share their compiled shapes
ARGV = [f"--config={e2e.ROOT}/configs/cades/cades.py:tiny",
        "--config.parts=('multivariate',)", "--config.multivariate.models=('neural',)",
        "--config.multivariate.n_cal=16", "--config.eval.plots=False"]

pytestmark = pytest.mark.slow


base = e2e.base_fixture(MODULE, ARGV)


def test_sigterm_while_training_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    err = e2e.check_preempted_then_resumed(MODULE, "train:4", ARGV, str(tmp_path), cache, full)
    assert "saved checkpoint at step 5 of 10" in err and "neural_server" in err


def test_sigterm_during_evaluation_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    err = e2e.check_preempted_then_resumed(MODULE, f"call:{MODULE}:auroc_sweep", ARGV,
                                           str(tmp_path), cache, full)
    assert "outside the train loop" in err
