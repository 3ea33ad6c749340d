"""The latent-ATE experiment end to end on the tiny config; checkpoint reuse; config errors."""
import json
import os

import numpy as np
import pytest

from experiments.latent_ate import train
from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common.config import ConfigError
from lib.latent_ate import report, runs
from tests import experiment_runs

CONFIG = "configs/latent_ate/latent_ate.py:tiny"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"] == json.loads(json.dumps(results["targets"]))
    for setting in ("label", "complex"):
        block = on_disk["settings"][setting]
        assert set(block["estimators"]) == {"naive", "oracle", "s_linear_latent",
                                            "dml_linear_latent"}
        for s in block["estimators"].values():
            assert len(s["thetas"]) == 8 and np.all(np.isfinite(s["thetas"]))
            assert 0.0 <= s["coverage"] <= 1.0
        rmse = block["estimators"]["dml_linear_latent"]["nuisance_rmse"]
        assert set(rmse) == {"ml_l", "ml_m"} and rmse["ml_m"]["mean"] < 0.5
        assert block["estimators"]["naive"]["nuisance_rmse"] == {}
    # the disjoint split: digits pool_fraction 0.5 of 1,797 images
    assert on_disk["features"]["pool_size"] == pytest.approx(898, abs=5)
    dims = on_disk["features"]["intrinsic_dim"]
    assert dims["pixels"]["ambient"] == 64 and dims["cnn"]["ambient"] == 32
    assert all(0 < d["two_nn"] <= d["ambient"] + 1 for d in dims.values())
    text = open(os.path.join(workdir, "results.md")).read()
    assert "**label confounding**" in text and "| dml_linear_latent | cnn |" in text
    assert "| complex | dml_linear_latent |" in text            # the nuisance-RMSE table
    assert set(on_disk["targets"]) == {
        f"{s}/{t}" for s in ("label", "complex") for t in (
            "dml_linear_latent/coverage", "dml_linear_latent/bias", "naive/visibly_biased")}
    for name in ("estimates_label.png", "estimates_complex.png", "zscores_label.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000


def test_rerun_reuses_the_pretrained_checkpoints_and_features(tiny_run):
    workdir, _ = tiny_run
    for net in ("cnn", "pixel_ae", "confounder_ae"):
        steps = os.listdir(os.path.join(workdir, "pretrain", net, "checkpoints"))
        assert steps == ["40"]
    cache = os.path.join(workdir, "features", "cnn.npy")
    stamp = os.path.getmtime(cache)
    config = config_lib.load_config(CONFIG)
    again = runs.pretrain_and_extract(config, workdir, None)
    assert os.path.getmtime(cache) == stamp                       # cache read, not rewritten
    np.testing.assert_array_equal(again["cnn"], np.load(cache))
    # without the cache, the networks are restored from their checkpoints (step 40, no
    # training) and give the same features
    moved = os.path.join(workdir, "features_old")
    os.rename(os.path.join(workdir, "features"), moved)
    restored = runs.pretrain_and_extract(config, workdir, mesh_lib.make_mesh())
    np.testing.assert_allclose(restored["cnn"], np.load(os.path.join(moved, "cnn.npy")),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(restored["confounder"],
                               np.load(os.path.join(moved, "confounder.npy")), rtol=1e-4,
                               atol=1e-4)
    for net in ("cnn", "pixel_ae", "confounder_ae"):
        assert os.listdir(os.path.join(workdir, "pretrain", net, "checkpoints")) == ["40"]


def test_a_workdir_of_another_config_is_refused(tiny_run):
    workdir, _ = tiny_run
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), {"sim.n": 301})
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(config, workdir)


@pytest.mark.parametrize("variant", ["quick", "official", "paper"])
def test_the_target_is_the_official_pairing_with_both_mlp_nuisances_beside_it(variant):
    # the treatment is binary in both designs: MLP outcome + logistic propensity is judged
    config = config_lib.load_config(f"configs/latent_ate/latent_ate.py:{variant}")
    assert tuple(config.eval.target_estimators) == ("dml_mlp_logit_latent",)
    assert "dml_mlp_logit_latent" in config.estimators
    assert variant == "official" or "dml_mlp_latent" in config.estimators


@pytest.mark.parametrize("overrides,message", [
    ({"sim.settings": ("label", "text")}, r"'sim.settings' = \('label', 'text'\) is not allowed"),
    ({"data.label_classes": (3, 11)}, r"'data.label_classes' = \(3, 11\) is not allowed"),
    ({"sim.n": 5000}, r"'sim.n' = 5000 is not allowed; the digits pool"),
    ({"dml.clip": 0.5}, r"'dml.clip' = 0.5 is not allowed"),
    ({"estimators": ("naive", "magic")}, r"'estimators' = \('naive', 'magic'\) is not allowed"),
    ({"eval.target_estimators": ("irm_mlp_latent",)},
     r"\['irm_mlp_latent'\] are not in 'estimators'"),
    ({"dml.ridge_lambdas": (-1.0,)}, r"'dml.ridge_lambdas' = \(-1.0,\) is not allowed"),
    ({"mlp.penalty": "oracle"}, r"'mlp.penalty' = 'oracle' is not allowed"),
    ({"mlp.l2_grid": ()}, r"'mlp.l2_grid' = \(\) is not allowed"),
])
def test_bad_configs_are_named_before_any_compute(tmp_path, overrides, message):
    config = config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides)
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, str(tmp_path / "never"))
    assert not os.path.exists(tmp_path / "never")


def test_render_is_the_tables_the_targets_and_the_run_line(tiny_run):
    workdir, _ = tiny_run
    r = json.load(open(os.path.join(workdir, "results.json")))
    config = config_lib.to_json_dict(config_lib.load_config(CONFIG))
    assert report.render(r, config) == (
        f"{open(os.path.join(workdir, 'results.md')).read().rstrip(chr(10))}\n\n**Targets**\n\n"
        f"{report.target_lines(r['targets'])}\n\nConfig `{config['tag']}`; measured on "
        f"{r['machine']}, wall time {r['wall_s']:.0f} s (1 run(s); pre-training "
        f"{r['features']['pretrain_seconds']:.0f} s in the first, 0 when its checkpoints and "
        "feature cache were reused; s = seconds per estimator for all replications).")
