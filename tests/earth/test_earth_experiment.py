"""EARTH config validation and a small end-to-end run of the binary's path (results, resume)."""
import json
import os

import numpy as np
import pytest

from experiments.earth import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.earth.config_schema import check_files

CONFIG = "configs/earth/earth.py"


def _tiny(**over):
    c = config_lib.load_config(f"{CONFIG}:tiny")
    for k, v in over.items():
        node = c
        *path, last = k.split(".")
        for p in path:
            node = node[p]
        node[last] = v
    return c


@pytest.mark.parametrize("over,msg", [
    ({"model.heads": 3}, "must divide 'model.hidden'"),
    ({"model.ar_lags": 9}, "exceeds 'data.window'"),
    ({"data.horizons": (2, 2)}, "distinct horizons"),
    ({"data.val_frac": 0.5}, "must be < 1"),
    ({"model.solver": "rk45"}, "model.solver"),
    ({"datasets": ("custom",)}, "data.custom_series"),
    ({"model.dt": 0.3}, "must divide the window span"),
])
def test_bad_config_is_refused(over, msg):
    mod = config_lib._module_of(CONFIG)
    with pytest.raises(ConfigError, match=msg):
        mod.validate(_tiny(**over))


def test_missing_benchmark_file_is_named(tmp_path):
    c = _tiny(datasets=("simulated", "japan"))
    c.data.root = str(tmp_path)
    with pytest.raises(ConfigError, match="japan.txt"):
        check_files(c)


def test_tiny_run_writes_results_and_resumes(tmp_path):
    c = _tiny(models=("persistence", "linear_ar"))
    wd = str(tmp_path / "run")
    out = train.train_and_evaluate(c, wd)
    res = json.load(open(os.path.join(wd, "results.json")))
    assert set(res["results"]["simulated"]) == {"persistence", "linear_ar"}
    for h in ("2", "4"):
        m = res["results"]["simulated"]["persistence"]["test"][h]
        assert m["rmse"] >= m["mae"] > 0 and -1 <= m["pcc"] <= 1
    # persistence is the last value of the window: check its RMSE by hand on the raw series
    preds = np.load(os.path.join(wd, "predictions.npz"))
    series, t = preds["simulated/series"], preds["simulated/targets/h4"]
    rmse = np.sqrt(np.mean((series[t] - series[t - 4]) ** 2))
    assert res["results"]["simulated"]["persistence"]["test"]["4"]["rmse"] == pytest.approx(rmse)
    assert os.path.exists(os.path.join(wd, "plots", "forecast_simulated_h4.png"))
    again = train.train_and_evaluate(c, wd)                     # resumes: nothing retrained
    assert again["results"] == out["results"]


def test_best_validation_selection_with_early_stopping(tmp_path):
    # EpiGNN's dilated kernels span 9 rows: window 10; patience 1 over at most 40 epochs
    c = _tiny(models=("epignn",), **{"data.window": 10, "select.enabled": True,
                                     "select.patience": 1, "select.max_epochs": 40})
    wd = str(tmp_path / "sel")
    out = train.train_and_evaluate(c, wd)
    sel = out["results"]["simulated"]["epignn"]["selection"]
    assert len(sel["best_epoch"]) == len(c.data.horizons) * c.num_seeds
    # every copy stops one epoch after its best; the run ends once all have stopped
    assert 1 <= min(sel["best_epoch"]) and max(sel["best_epoch"]) < sel["stopped_at_epoch"] < 40
    again = train.train_and_evaluate(c, wd)                     # resumes: nothing retrained
    assert again["results"] == out["results"]
