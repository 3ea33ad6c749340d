"""The experiment end to end on the tiny config, config errors, frozen constants, EBM."""
import os

import jax
import numpy as np
import pytest

from experiments.anova_tpnn import train
from lib.anova_tpnn import baselines, data as data_lib
from lib.anova_tpnn.model import stack_components
from lib.common import config as config_lib, train_loop, workdir as wd

CONFIG = "configs/anova_tpnn/anova_tpnn.py"


def _tiny(**overrides):
    config = config_lib.load_config(f"{CONFIG}:tiny")
    for key, value in overrides.items():
        block, _, leaf = key.rpartition(".")
        (config[block] if block else config)[leaf] = value
    return config


@pytest.mark.parametrize("key,value,message", [
    ("datasets", ("synth_reg", "iris"), "'datasets'"),
    ("models", ("nam", "nbm"), "must include 'tpnn'"),
    ("model.max_order", 0, "'model.max_order'"),
    ("data.madelon_redundant", 20, "exceeds data.madelon_features"),
    ("ebm.num_replicas", 9, "'ebm.num_replicas' = 9 exceeds replicas.num"),
])
def test_bad_configs_are_rejected_before_compute(key, value, message):
    with pytest.raises(config_lib.ConfigError, match=message):
        train.validate(_tiny(**{key: value}))


def test_interaction_order_above_the_feature_count_is_an_error_before_training(tmp_path):
    config = _tiny(**{"datasets": ("madelon",), "data.madelon_features": 3,
                      "data.madelon_informative": 2, "data.madelon_redundant": 0,
                      "model.max_order": 4})
    with pytest.raises(ValueError, match="max_order = 4 exceeds the 3 features of data set "
                                         "'madelon'"):
        train.train_and_evaluate(config, str(tmp_path))
    assert not os.path.exists(tmp_path / wd.CONFIG)                     # nothing started


def test_tiny_run_writes_results_and_frozen_constants_centre_every_replica(tmp_path):
    config = _tiny(**{"datasets": ("synth_reg",), "models": ("tpnn", "nam"),
                      "replicas.modes": ("resample",), "train.num_steps": 30,
                      "eval.plots": True})
    results = train.train_and_evaluate(config, str(tmp_path))
    saved = wd.read_json(str(tmp_path / wd.RESULTS))
    entry = saved["datasets"]["synth_reg"]["modes"]["resample"]
    assert set(entry) == {"tpnn", "nam"}
    for model in ("tpnn", "nam"):
        for key in ("metric", "stability", "stability_centred", "stability_weighted"):
            assert np.isfinite(entry[model][key]), (model, key)
        assert len(entry[model]["metric_per_replica"]) == 3
    assert set(results["targets"]) == {"stability", "stability_centred", "stability_mains",
                                       "stability_weighted", "recovery", "recovery_centred",
                                       "prediction"}
    assert results["targets"]["stability"]["per_set"]["synth_reg/resample"]["ratios"]["nam"] > 0
    assert (tmp_path / "results.md").exists()

    # the frozen constants make every replica's main effects zero-mean on ITS resample
    ds = data_lib.load("synth_reg", config.data, config.seed)
    weights = data_lib.resample_weights(len(ds.x_train), 3, "resample", 0.8, config.seed + 101)
    run_dir = str(tmp_path / "runs" / "synth_reg" / "resample" / "tpnn")
    model = baselines.build("tpnn", 8, config.model)
    task = train.make_task(model, "tpnn", ds, weights, config, 64, 0)
    state, step = train_loop.restore_trained(task, run_dir, seed=config.train.seed + 1)
    assert step == 30
    frozen = np.load(os.path.join(run_dir, "frozen_constants.npz"))
    consts = {o: frozen[f"order_{o}"] for o in (1, 2)}
    for r in range(3):
        params = jax.tree.map(lambda a: a[r], state["params"])
        comps = model.apply(params, ds.x_train, {o: c[r] for o, c in consts.items()},
                            method=model.components)
        keep = weights[:, r] > 0
        np.testing.assert_allclose(np.mean(np.asarray(comps[1])[keep], axis=0), 0.0,
                                   atol=1e-5)
        assert stack_components(comps).shape == (len(ds.x_train), 36)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_ebm_components_sum_to_its_prediction(task):
    pytest.importorskip("interpret")
    import ml_collections
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (200, 3))
    y = np.sin(3 * x[:, 0]) + x[:, 1] * x[:, 2]
    if task == "classification":
        y = (y > 0).astype(float)
    cfg = ml_collections.ConfigDict(dict(interactions=2, outer_bags=2))
    names = [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    pred, comps, icpt = baselines.fit_ebm(x, y, x[:20], names, task, cfg, seed=0)
    assert comps.shape == (20, 6) and np.abs(comps[:, :3]).max() > 0.1
    np.testing.assert_allclose(comps.sum(axis=1) + icpt, pred, rtol=1e-6, atol=1e-6)
