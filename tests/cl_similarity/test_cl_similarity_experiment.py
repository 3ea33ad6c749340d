"""The cl_similarity experiment end to end on the tiny config, resume, config errors, the report."""
import json
import os
import subprocess
import sys

import pytest

from experiments.cl_similarity import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from tests import experiment_runs

CONFIG = "configs/cl_similarity/cl_similarity.py:tiny"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)


def test_tiny_run_writes_results_tables_plots_and_targets(tiny_run):
    workdir, results = tiny_run
    with open(os.path.join(workdir, "results.json")) as f:
        on_disk = json.load(f)
    assert on_disk["targets"] == results["targets"]
    assert set(on_disk["targets"]) == {
        "free_embeddings_match_closed_form", "thm52_holds_on_trajectories",
        "minibatch_variance_in_thm55_bounds", "minibatch_vrns_lowers_variance",
        "digits_variance_drops_every_batch", "digits_probe_improves_batch_le_64"}
    th = on_disk["theory"]
    assert th["thm52_max_violation"] <= 1e-6
    sig = th["full_batch"]["siglip/cross"]
    assert sig["pos_theory"] < 1 and sig["neg_theory"] < -1 / 7        # excessive separation
    assert sig["pos"] < 0.5 and sig["neg"] < -1 / 7                    # ... reached by Adam
    runs = on_disk["ssl"]["digits"]["runs"]
    assert [(r["batch_size"], r["aux"]) for r in runs] == [(16, False), (16, True)]
    assert on_disk["ssl"]["digits"]["num_train"] == 161 and runs[0]["steps"] == 10   # 161 // 16
    for r in runs:
        assert 0.0 <= r["probe_test_acc"] <= 1.0 and r["neg_var"] >= 0.0
    with open(os.path.join(workdir, "results.md")) as f:
        text = f.read()
    assert "| siglip/cross |" in text and "SimCLR ± VRNS on digits" in text
    for name in ("theory_siglip_threshold.png", "theory_alignment_bound.png",
                 "theory_minibatch_variance.png", "ssl_digits_variance.png",
                 "ssl_digits_accuracy.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000
    assert os.path.isdir(os.path.join(workdir, "runs", "digits_b16_vrns", "checkpoints"))


def test_rerun_reads_finished_runs_back(tiny_run):
    workdir, results = tiny_run
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG),
                                        {"parts": ("ssl",)})
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(config, workdir)            # a different run: refused
    again = train.run_ssl(config_lib.load_config(CONFIG), workdir, None, None)
    assert again["digits"]["runs"] == results["ssl"]["digits"]["runs"]


@pytest.mark.parametrize("overrides,message", [
    ({"ssl.batch_sizes": (16, 256)}, "256 exceeds the 160 training images"),
    ({"theory.d": 4}, "theory.d"),
    ({"theory.batch_sizes": (3,)}, "must divide theory.n"),
    ({"ssl.loss": "byol"}, "ssl.loss"),
    ({"ssl.datasets": ("cifar",)}, "ssl.datasets"),
    ({"fashion_mnist.num_images": 5}, "fashion_mnist.num_images"),
])
def test_bad_config_is_refused_before_compute(tmp_path, overrides, message):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides)
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, str(tmp_path))
    assert not os.path.exists(os.path.join(tmp_path, "config.json"))


def test_results_tool_splices_the_readme_block(tiny_run, tmp_path):
    workdir, _ = tiny_run
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- results:tiny:begin -->\nPLACEHOLDER\n<!-- results:tiny:end -->\ny\n")
    subprocess.run([sys.executable, "tools/results.py", "--paper=cl_similarity",
                    f"--workdir={workdir}", f"--readme={readme}", "--tag=tiny"], cwd=ROOT,
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": ROOT})
    text = readme.read_text()
    assert "PLACEHOLDER" not in text and "| infonce/cross |" in text and "MET" in text
