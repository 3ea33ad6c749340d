"""cl_similarity under SIGTERM, end to end through its command line (tiny config, the SSL
part, no plots): a SIGTERM in a SimCLR run's training or in its linear-probe evaluation exits 0 (it
exited 1 through `SystemExit("preempted; ...")`) with neither results.json nor the run's
run.json, and the same command then ends with the results of an uninterrupted run.

Logging every 4 steps, so that the SIGTERM at step index 3 ends a logging window: a run's
`final_train_loss` is the mean of the last window of metrics.jsonl, and a preemption inside
a window splits it into two rows (a difference of the log, not of the parameters)."""
import glob
import os

import pytest

from tests.common import preemption_e2e as e2e

MODULE = "experiments.cl_similarity.train"
ARGV = [f"--config={e2e.ROOT}/configs/cl_similarity/cl_similarity.py:tiny",
        "--config.parts=('ssl',)", "--config.train.log_every=4", "--config.eval.plots=False"]

pytestmark = pytest.mark.slow


base = e2e.base_fixture(MODULE, ARGV)


def test_sigterm_while_training_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    err = e2e.check_preempted_then_resumed(MODULE, "train:3", ARGV, str(tmp_path), cache, full)
    assert "saved checkpoint at step 4 of" in err and "digits_b16_base" in err


def test_sigterm_during_evaluation_exits_0_and_the_rerun_matches(tmp_path, base):
    cache, full = base
    work = str(tmp_path)
    err = e2e.check_preempted_then_resumed(MODULE, "call:lib.cl_similarity.evaluation:evaluate", ARGV,
                                           work, cache, full)
    assert "outside the train loop" in err
    assert len(glob.glob(os.path.join(work, "runs", "*", "run.json"))) == 2
