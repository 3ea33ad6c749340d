"""DSL experiment pieces: config errors, replica plans, the vmapped Task on the harness
(MLP replicas, so it stays fast), data scaling into Ω, target bookkeeping."""
import json
import os

import numpy as np
import pytest

from lib.common import mesh as mesh_lib, train_loop
from lib.common.config import ConfigError, load_config
from lib.dsl import config_schema, data as data_lib, report
from lib.dsl.training import Model, make_plan, make_task, predict, selected_params

CONFIG = "configs/dsl/dsl.py"


def _config(**overrides):
    cfg = load_config(f"{CONFIG}:tiny")
    for key, value in overrides.items():
        block, name = key.split(".")
        cfg[block][name] = value
    return cfg


def test_config_rejects_too_many_modes_and_bad_choices():
    mod = __import__("importlib").import_module("lib.dsl.config_schema")
    with pytest.raises(ConfigError, match="model.num_modes.*num_nodes = 12 gives 10"):
        mod.validate(_config(**{"model.num_modes": 11}))
    with pytest.raises(ConfigError, match="model.mass"):
        mod.validate(_config(**{"model.mass": "diagonal"}))
    with pytest.raises(ConfigError, match="data.fractions"):
        mod.validate(_config(**{"data.fractions": (0.5, 0.25)}))


def test_plan_subsamples_are_stratified_and_nested_sizes():
    y = np.repeat(np.arange(3), [50, 30, 20])
    plan = make_plan(y, (0.1, 1.0), num_seeds=2, min_per_class=2, seed=0)
    assert plan.num == 4 and list(plan.group) == [0, 0, 1, 1]
    assert list(plan.sizes) == [5 + 3 + 2, 10, 100, 100]
    for r in range(2):
        rows = plan.index[r, :plan.sizes[r]]
        assert np.bincount(y[rows], minlength=3).tolist() == [5, 3, 2]
    assert not np.array_equal(plan.index[0, :10], plan.index[1, :10])   # seeds differ


def test_data_is_scaled_into_the_ball_and_box():
    cfg = _config().data
    ds = data_lib.load("wine", cfg, domain="ball", radius=1.0, seed=0)
    assert np.isclose(np.linalg.norm(ds.x_train, axis=1).max(), cfg.input_radius, atol=1e-6)
    assert np.linalg.norm(ds.x_test, axis=1).max() <= cfg.clip_radius + 1e-6
    assert len(ds.x_train) + len(ds.x_test) == 178 and ds.num_classes == 3
    box = data_lib.load("wine", cfg, domain="box", radius=1.0, seed=0)
    margin = 0.5 * (1 - cfg.input_radius)
    assert np.isclose(box.x_train.min(), margin) and np.isclose(box.x_train.max(), 1 - margin)


def test_vmapped_replicas_train_on_the_harness(tmp_path):
    cfg = _config()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 4)).astype(np.float32) * 0.2
    y = (x[:, 0] > 0).astype(np.int32)
    ds = data_lib.Dataset("synthetic", x, y, x, y, 2)
    plan = make_plan(y, (0.1, 1.0), num_seeds=1, min_per_class=1, seed=0)
    model = Model("mlp", cfg, 4, 2)
    task = make_task(model, ds, plan, lr=5e-2, weight_decay=0.0, batch=16, seed=0, clip=1.0)
    batch = task.batch_fn(3, slice(None))
    assert batch["x"].shape == (16, 2, 4)
    assert batch["w"][:, 0].sum() == plan.sizes[0] == 6 and batch["w"][:, 1].sum() == 16
    mesh = mesh_lib.make_mesh()
    loop = train_loop.LoopConfig(num_steps=30, log_every=15, checkpoint_every=30)
    out = train_loop.train(task, loop, workdir=str(tmp_path), mesh=mesh)
    with open(os.path.join(tmp_path, "metrics.jsonl")) as f:
        rows = [json.loads(line) for line in f]
    assert {"loss_f10", "acc_f10", "loss_f100", "acc_f100"} <= set(rows[-1])
    assert rows[-1]["loss_f100"] < rows[0]["loss_f100"]
    logits, _ = predict(model, out.state["params"], x, chunk=25)
    assert logits.shape == (2, 60, 2)
    assert np.mean(np.argmax(logits[1], -1) == y) > 0.9


def _fake(dsl, mlp):
    def by(accs):
        return {f"f{100 * f:g}": {"fraction": f, "n_train": 1, "acc": a, "acc_sd": 0.0,
                                  "acc_per_seed": [a]} for f, a in zip((0.05, 0.1, 1.0), accs)}
    return {"models": {"dsl": {"by_fraction": by(dsl)}, "mlp": {"by_fraction": by(mlp)}}}


def test_targets_full_data_tolerance_and_low_data_majority():
    res = {"datasets": {"a": _fake((0.8, 0.85, 0.950), (0.7, 0.8, 0.955)),
                        "b": _fake((0.6, 0.60, 0.900), (0.7, 0.7, 0.915)),
                        "c": _fake((0.5, 0.55, 0.990), (0.4, 0.5, 0.980))}}
    t = report.targets(res)
    assert t["full_data"]["per_dataset"]["a"]["met"] and not t["full_data"]["per_dataset"]["b"]["met"]
    assert not t["full_data"]["met"]
    assert [t["low_data"]["per_dataset"][k]["ahead"] for k in "abc"] == [True, False, True]
    assert t["low_data"]["met"]                                   # 2 of 3 sets
    assert np.isclose(t["low_data"]["per_dataset"]["a"]["dsl_minus_mlp"], 0.075)


def test_validation_split_is_stratified_and_disjoint_and_keeps_every_class():
    y = np.repeat(np.arange(3), [40, 20, 10]).astype(np.int32)
    x = np.arange(70, dtype=np.float32)[:, None] * np.ones((1, 2), np.float32)
    ds = data_lib.Dataset("s", x, y, x[:5], y[:5], 3)
    out = data_lib.split_validation(ds, 0.2, seed=0)
    assert np.bincount(out.y_val, minlength=3).tolist() == [8, 4, 2]
    assert len(out.x_train) == 56
    assert not set(out.x_train[:, 0]) & set(out.x_val[:, 0])          # disjoint rows
    assert set(out.x_train[:, 0]) | set(out.x_val[:, 0]) == set(x[:, 0])
    tiny = data_lib.Dataset("t", x[:3], np.array([0, 1, 1], np.int32), x[:1], y[:1], 2)
    with pytest.raises(ValueError, match=r"leaves class\(es\) \[0\] of 't' without"):
        data_lib.split_validation(tiny, 0.6, seed=0)
    with pytest.raises(ConfigError, match="'data.val_fraction' = 0.2 needs eval.val_every"):
        config_schema.validate(_config(**{"data.val_fraction": 0.2}))


def test_best_validation_selection_matches_an_independent_replay():
    """Replay the jitted steps, recompute each replica's validation loss outside the step:
    best_step / best_val / best_params are the argmin over the checked steps."""
    import jax
    import optax
    cfg = _config()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(80, 4)).astype(np.float32) * 0.3
    y = (x[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(np.int32)
    ds = data_lib.split_validation(data_lib.Dataset("syn", x, y, x, y, 2), 0.25, seed=0)
    plan = make_plan(ds.y_train, (0.25, 1.0), num_seeds=1, min_per_class=1, seed=0)
    model = Model("mlp", cfg, 4, 2)
    task = make_task(model, ds, plan, lr=5e-2, weight_decay=0.0, batch=16, seed=0, clip=1.0,
                     val_every=4, num_steps=10)                       # checks at 4, 8, 10
    state = jax.jit(task.init_state)(jax.random.key(0))
    step = jax.jit(task.train_step)
    best = [(np.inf, 0, None)] * plan.num
    for s in range(10):
        state, _ = step(state, task.batch_fn(s, slice(None)), jax.random.key(s))
        if s + 1 in (4, 8, 10):
            for r in range(plan.num):
                p = jax.tree.map(lambda a: a[r], state["params"])
                loss = float(np.mean(optax.softmax_cross_entropy_with_integer_labels(
                    model.apply(p, ds.x_val), ds.y_val)))
                if loss < best[r][0]:
                    best[r] = (loss, s + 1, p)
    np.testing.assert_array_equal(np.asarray(state["best_step"]), [b[1] for b in best])
    np.testing.assert_allclose(np.asarray(state["best_val"]), [b[0] for b in best], rtol=1e-5)
    for r in range(plan.num):
        jax.tree.map(lambda a, b: np.testing.assert_array_equal(np.asarray(a)[r], b),
                     state["best_params"], best[r][2])
    assert selected_params(state) is state["best_params"]
    plain = make_task(model, ds, plan, lr=5e-2, weight_decay=0.0, batch=16, seed=0)
    assert "best_params" not in jax.jit(plain.init_state)(jax.random.key(0))
