"""The experiment end to end on the tiny config, config errors, frozen constants,
best-on-validation selection, EBM."""
import dataclasses
import functools
import os

import jax
import numpy as np
import pytest

from experiments.anova_tpnn import train
from lib.anova_tpnn import baselines, data as data_lib, training
from lib.anova_tpnn.model import stack_components
from lib.common import config as config_lib, train_loop, workdir as wd
from lib.common import mesh as mesh_lib

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
    ("eval.val_every", 100, "'eval.val_every' = 100 exceeds train.num_steps = 60"),
    ("data.val_fraction", 1.0, "'data.val_fraction'"),
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
    # one device: checkpointing states replicated over the 8 fake test devices costs more
    # than the tiny training; sharded training is covered by tests/common
    one = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(train.mesh_lib, "make_mesh", lambda data, model: one)
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
    assert (tmp_path / "results.md").exists() and saved["complete"]
    assert saved["datasets"]["synth_reg"]["n_val"] == 30

    # the frozen constants make every replica's main effects zero-mean on ITS resample
    ds = data_lib.load("synth_reg", config.data, config.seed)
    weights = data_lib.resample_weights(len(ds.x_train), 3, "resample", 0.8, config.seed + 101)
    run_dir = str(tmp_path / "runs" / "synth_reg" / "resample" / "tpnn")
    model = baselines.build("tpnn", 8, config.model)
    task = training.make_task(model, "tpnn", ds, weights, config, 64, 0)
    state, step = train_loop.restore_trained(task, run_dir, seed=config.train.seed + 1)
    assert step == 30
    frozen = np.load(os.path.join(run_dir, "frozen_constants.npz"))
    consts = {o: frozen[f"order_{o}"] for o in (1, 2)}
    # the evaluated params are each replica's best-on-validation ones
    assert "best_params" in state
    np.testing.assert_array_equal(entry["tpnn"]["selected_step_per_replica"],
                                  np.asarray(state["best_step"]))
    components = jax.jit(functools.partial(model.apply, method=model.components))
    for r in range(3):
        params = jax.tree.map(lambda a: a[r], training.selected_params(state))
        comps = components(params, ds.x_train, {o: c[r] for o, c in consts.items()})
        keep = weights[:, r] > 0
        np.testing.assert_allclose(np.mean(np.asarray(comps[1])[keep], axis=0), 0.0,
                                   atol=1e-5)
        assert stack_components(comps).shape == (len(ds.x_train), 36)


def test_best_on_validation_selection_matches_an_independent_replay():
    """Replay the jitted steps and recompute every validation loss outside the step (the
    replica's constants on its own resample, the loss on the validation rows): the state's
    best_step / best_val / best_params must be the argmin over the checked steps."""
    config = _tiny(**{"train.num_steps": 12, "eval.val_every": 5})   # checks at 5, 10, 12
    ds = data_lib.load("diabetes", config.data, config.seed)
    weights = data_lib.resample_weights(len(ds.x_train), 3, "resample", 0.8, 1)
    model = baselines.build("tpnn", ds.num_features, config.model)
    task = training.make_task(model, "tpnn", ds, weights, config, 64, 0)
    state = jax.jit(task.init_state)(jax.random.key(0))
    step = jax.jit(task.train_step)

    @jax.jit
    def val_predictions(params, w):
        consts = model.apply(params, ds.x_train, w, method=model.constants)
        return model.apply(params, ds.x_val, consts)

    def val_loss(params, r):
        return float(np.mean((np.asarray(val_predictions(params, weights[:, r]))
                              - ds.y_val) ** 2))

    best = [(np.inf, 0, None)] * 3
    for s in range(12):
        state, _ = step(state, task.batch_fn(s, slice(None)), jax.random.key(s))
        if (s + 1) in (5, 10, 12):
            for r in range(3):
                params = jax.tree.map(lambda a: a[r], state["params"])
                loss = val_loss(params, r)
                if loss < best[r][0]:
                    best[r] = (loss, s + 1, params)
    np.testing.assert_array_equal(np.asarray(state["best_step"]), [b[1] for b in best])
    np.testing.assert_allclose(np.asarray(state["best_val"]), [b[0] for b in best], rtol=1e-5)
    for r in range(3):
        jax.tree.map(lambda a, b: np.testing.assert_array_equal(np.asarray(a)[r], b),
                     state["best_params"], best[r][2])
    assert training.selected_params(state) is state["best_params"]
    no_val = dataclasses.replace(ds, x_val=ds.x_val[:0], y_val=ds.y_val[:0])
    state = jax.jit(training.make_task(model, "tpnn", no_val, weights, config, 64, 0).init_state)(
        jax.random.key(0))
    assert "best_params" not in state and training.selected_params(state) is state["params"]


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


def test_per_replica_batch_order_differs_between_replicas_and_reproduces_per_seed():
    config = _tiny(**{"replicas.batch_order": "per_replica"})
    ds = data_lib.load("synth_reg", config.data, config.seed)
    n = len(ds.x_train)
    weights = data_lib.resample_weights(n, 3, "resample", 0.8, 1)
    model = baselines.build("nam", ds.num_features, config.model)
    task = training.make_task(model, "nam", ds, weights, config, 64, 7)
    b = task.batch_fn(4, slice(None))
    assert b["x"].shape == (64, 3, ds.num_features) and b["w"].shape == (64, 3)
    assert not np.array_equal(b["x"][:, 0], b["x"][:, 1])             # own orders
    np.testing.assert_array_equal(b["x"], task.batch_fn(4, slice(None))["x"])
    for r in range(3):                       # rows drawn only from the replica's own sample
        own = {tuple(row) for row in ds.x_train[weights[:, r] > 0]}
        assert all(tuple(row) in own for row in b["x"][:, r])
    # replica 1's order does not depend on how many replicas run with it
    two = training.replica_batches(ds.x_train, ds.y_train, weights[:, :2],
                                   [np.flatnonzero(weights[:, r] > 0) for r in range(2)],
                                   64, 7, 4)
    np.testing.assert_array_equal(two["x"][:, 1], b["x"][:, 1])
    shared = training.make_task(model, "nam", ds, weights, _tiny(), 64, 7).batch_fn(4,
                                                                                  slice(None))
    assert shared["x"].shape == (64, ds.num_features)                 # old configs unchanged
    # a per-replica step equals the replica's step taken alone on its own batch
    state = jax.jit(task.init_state)(jax.random.key(0))
    new, _ = jax.jit(task.train_step)(state, b, jax.random.key(0))
    one = training.make_task(model, "nam", ds, weights[:, 1:2], _tiny(), 64, 7)
    alone = {**state, **{k: jax.tree.map(lambda a: a[1:2], state[k])
                         for k in ("params", "opt_state")}}
    alone_new, _ = jax.jit(one.train_step)(
        alone, {"x": b["x"][:, 1], "y": b["y"][:, 1], "w": b["w"][:, 1:2]}, jax.random.key(0))
    jax.tree.map(lambda a, c: np.testing.assert_allclose(np.asarray(a)[1], np.asarray(c)[0],
                                                         rtol=1e-5, atol=1e-6),
                 new["params"], alone_new["params"])


def test_epoch_budget_scales_steps_with_the_data_set_and_old_configs_keep_steps():
    config = _tiny(**{"epochs": 10.0, "eval.val_every_epochs": 2.0})
    assert training.budget(config, 300, 64) == (47, 9)        # ceil(10·300/64), round(2·300/64)
    assert training.budget(config, 1400, 64) == (219, 44)
    assert training.budget(_tiny(), 300, 64) == (60, 10)      # train.num_steps, eval.val_every
    train.validate(_tiny(**{"epochs": 10.0, "eval.val_every": 1000}))  # steps check off
    with pytest.raises(config_lib.ConfigError, match="'replicas.batch_order'"):
        train.validate(_tiny(**{"replicas.batch_order": "random"}))
    with pytest.raises(config_lib.ConfigError, match="'eval.purify_grid' = 5 needs "
                                                     "model.max_order <= 2"):
        train.config_schema.check_purify(_tiny(**{"model.max_order": 3,
                                                  "eval.purify_grid": 5}))
    train.config_schema.check_purify(_tiny(**{"model.max_order": 3}))     # tiny: off
