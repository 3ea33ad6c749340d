"""The adam_abc experiment end to end on the tiny config (8 fake CPU devices), its config
checks, the results tool and the binary's exit code on a bad config."""
import json
import os
import subprocess
import sys

import pytest

from experiments.adam_abc import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from tests import experiment_runs

CONFIG = "configs/adam_abc/adam_abc.py:tiny"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG, name="adam_abc")


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert set(on_disk["rate"]["runs"]) == {"quadratic-gaussian/adam", "quadratic-gaussian/sgd",
                                            "quadratic-skewed/adam_const_beta2"}
    for s in on_disk["rate"]["runs"].values():
        assert s["horizons"] == [64, 128, 256] and len(s["avg"]) == 3
        assert s["slope_avg_ci"][0] <= s["slope_avg"] <= s["slope_avg_ci"][1]
        assert s["finite_fraction"] == [1.0, 1.0, 1.0]
        assert s["avg"][-1] < s["avg"][0]          # every run's gradient level falls with T
    asym = on_disk["asymptotic"]["runs"]["quadratic-skewed/adam"]
    assert asym["times"][0] == 0 and asym["times"][-1] == 400
    assert asym["l1"][-1] < 0.5 * asym["l1"][0]
    assert set(on_disk["targets"]) == {"rate", "asymptotic"}
    assert on_disk["targets"] == results["targets"]
    assert "| quadratic-gaussian/adam | theory |" in open(os.path.join(workdir, "results.md")).read()
    for name in ("rate_quadratic-gaussian.png", "rate_slopes.png",
                 "asymptotic_quadratic-skewed.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 1000


def test_results_tool_prints_the_tables_and_redraws_plots(tiny_run, tmp_path):
    workdir, _ = tiny_run
    os.remove(os.path.join(workdir, "plots", "rate_slopes.png"))
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- results:quick:begin -->\nold\n<!-- results:quick:end -->\ny\n")
    out = subprocess.run([sys.executable, "tools/results.py", "--paper=adam_abc",
                          f"--workdir={workdir}", "--plots", f"--readme={readme}", "--tag=quick"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    assert "| run | kind | oracle (A, B, C)" in out and "rate.adam_matches_sgd:" in out
    assert os.path.exists(os.path.join(workdir, "plots", "rate_slopes.png"))
    text = readme.read_text()                     # the printed tables, spliced between markers
    tables = out[out.index("Rate: slopes"):].rstrip("\n")
    assert text == f"x\n<!-- results:quick:begin -->\n{tables}\n<!-- results:quick:end -->\ny\n"


@pytest.mark.parametrize("key,value,message", [
    ("rate.settings", ("quadratic-cauchy",), r"'rate.settings' .* setting 'quadratic-cauchy'"),
    ("rate.settings", ("quadratic-minibatch",), r"minibatch noise needs a finite sum"),
    ("rate.methods", ("adam_const_alpha",), r"'rate.methods' .* from \['adam', 'adam_eps', 'sgd'\]"),
    ("rate.extra", ("quadratic-gaussian/rmsprop",), r"run 'quadratic-gaussian/rmsprop'"),
    ("rate.horizons", (64, 100), r"multiple of rate.records = 16"),
    ("rate.horizons", (128, 64), r"at least 2 increasing horizons"),
    ("asymptotic.beta2_c", 50.0, r"β2,1 = 1 − c/\(1 \+ offset\)\^beta2_power < 0"),
    ("adam.b1", 1.0, r"'adam.b1' = 1.0 is not allowed; expected a float >= 0.0 and < 1.0"),
    ("rate.alpha_hat", 0.0, r"'rate.alpha_hat' = 0.0 is not allowed; expected a float > 0.0"),
])
def test_bad_config_values_are_named(key, value, message):
    with pytest.raises(ConfigError, match=message):
        train.validate(config_lib.apply_overrides(config_lib.load_config(CONFIG), {key: value}))


def test_a_part_without_runs_is_refused():
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG),
                                        {"rate.methods": (), "rate.extra": ()})
    with pytest.raises(ConfigError, match="the rate part has no run"):
        train.validate(config)


def test_main_exits_2_on_a_config_error(tmp_path):
    proc = subprocess.run(
        [sys.executable, "experiments/adam_abc/main.py", f"--config={CONFIG}",
         "--config.adam.b1=1.5", f"--workdir={tmp_path}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 2
    assert "'adam.b1' = 1.5 is not allowed" in proc.stderr
