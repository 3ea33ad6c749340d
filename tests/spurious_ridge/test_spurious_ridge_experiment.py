"""The spurious-ridge experiment end to end on the tiny config, config errors, the report."""
import json
import os

import numpy as np
import pytest

from experiments.spurious_ridge import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from tests import experiment_runs

CONFIG = "configs/spurious_ridge/spurious_ridge.py:tiny"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"] == results["targets"]
    for name in ("base", "overparam"):
        s = on_disk["gaussian"]["settings"][name]
        assert len(s["C_theory"]) == len(s["C_cond"]) == 6
        assert np.all(np.isfinite(s["C_cond"])) and np.all(np.asarray(s["tau"]) >= s["lambdas"])
        assert not s["target_applies"]                                       # d = 30 < 500
    base = on_disk["gaussian"]["settings"]["base"]
    assert base["max_rel_err_L_cond"] < 0.1                                  # even at d = 30
    assert on_disk["digits"]["n_train"] == 1078
    assert len(on_disk["rf"]["width_sweep"]["C_rf"]) == 2
    text = open(os.path.join(workdir, "results.md")).read()
    assert "| base | 90 | 60 |" in text and "Coloured digits" in text
    for name in ("gaussian_base_C.png", "gaussian_overparam_L.png", "rf_equivalence_C.png",
                 "rf_width_sweep.png", "digits_C.png", "digits_rf_width.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000


def test_a_workdir_of_another_config_is_refused(tiny_run):
    workdir, _ = tiny_run
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), {"gaussian.d": 31})
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(config, workdir)


@pytest.mark.parametrize("overrides,message", [
    ({"gaussian.settings": ("base", "nope")}, r"'gaussian.settings' = \('base', 'nope'\) is not allowed"),
    ({"gaussian.lambda_max": 1e-4}, r"'gaussian.lambda_max' = 0.0001 is not allowed; it must exceed"),
    ({"rf.equiv_width": 7}, r"'rf.equiv_width' = 7 is not allowed; expected one of rf.widths"),
    ({"rf.activation": "relu"}, r"'rf.activation' = 'relu' is not allowed"),
    ({"digits.rho": 1.5}, r"'digits.rho' = 1.5 is not allowed; expected a float >= 0.0 and <= 1.0"),
    ({"parts": ()}, r"'parts' = \(\) is not allowed"),
])
def test_bad_configs_are_named_before_any_compute(tmp_path, overrides, message):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides)
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, str(tmp_path / "never"))
    assert not os.path.exists(tmp_path / "never")
