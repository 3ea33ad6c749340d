"""tools/earth_merge.py: parts run side by side (or one after another) merge into one results folder."""
import json
import os

import pytest

from lib.common.report import met_of
from tools import earth_merge


def _part(root, name, ds, models, rmse, select=1):
    d = os.path.join(root, name)
    os.makedirs(d)
    res = {"tag": "t", "machine": "m", "wall_s": 10.0 * len(models), "complete": True,
           "datasets": {ds: {"steps": 9, "regions": 2}},
           "results": {ds: {m: {"test": {"5": {"rmse": rmse[m]}}} for m in models}},
           "train_eval_seconds": {ds: {m: 1.0 for m in models}}, "targets": {},
           "horizons": [5], "num_seeds": 3, "num_steps": 1}
    cfg = {"tag": "t", "datasets": [ds], "models": list(models), "select": {"patience": select}}
    json.dump(res, open(os.path.join(d, "results.json"), "w"))
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    return d


def test_merge_unions_models_and_recomputes_targets(tmp_path):
    a = _part(tmp_path, "a", "japan", ["earth"], {"earth": 100.0}, select=5)
    b = _part(tmp_path, "b", "japan", ["epignn", "persistence"], {"epignn": 90.0, "persistence": 120.0})
    out, cfg = earth_merge.merge([a, b])
    assert set(out["results"]["japan"]) == {"earth", "epignn", "persistence"}
    assert out["wall_s"] == 20.0 and cfg["models"] == ["earth", "epignn", "persistence"]
    t = out["targets"]["japan"]
    assert met_of(t["at_or_below_epignn"]) is False and t["vs"]["epignn"]["margins"]["5"] == -10.0
    assert t["vs"]["persistence"]["margins"]["5"] == 20.0
    assert earth_merge.merge([a, b], sequential=True)[0]["wall_s"] == 30.0


def test_merge_refuses_a_model_twice_and_other_config_changes(tmp_path):
    a = _part(tmp_path, "a", "japan", ["earth"], {"earth": 1.0})
    b = _part(tmp_path, "b", "japan", ["earth"], {"earth": 2.0})
    with pytest.raises(SystemExit, match="two parts"):
        earth_merge.merge([a, b])
    c = _part(tmp_path, "c", "us_regions", ["earth"], {"earth": 1.0})
    cfg = json.load(open(os.path.join(c, "config.json")))
    json.dump({**cfg, "tag": "other"}, open(os.path.join(c, "config.json"), "w"))
    with pytest.raises(SystemExit, match=r"differs .* \['tag'\]"):
        earth_merge.merge([a, c])
