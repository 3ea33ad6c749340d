"""The experiment's pieces on the tiny config (equal budgets, a train step with the teacher,
encoder FLOPs), the targets' logic and the rendered table, config errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from configs.dynamic_detr import dynamic_detr as cfg
from experiments.dynamic_detr import train
from lib.common.config import ConfigError
from lib.dynamic_detr import evaluate, reporting
from tests.fast_compile import fast_jit


def test_variants_share_the_mean_token_budget():
    config = cfg.get_config("quick")
    vs = train.variants(config)
    assert [v.name for v in vs][:4] == ["dense", "topk_0.25", "focus_0.25", "dynamic_0.25"]
    n = 64 + 16 + 4
    for v in vs[1:]:
        counts = v.spec.counts(n, config.model.enc_layers)
        assert abs(sum(counts) / len(counts) - v.budget * n) <= 1.0, (v.name, counts)
        assert v.cd == (v.method == "dynamic" and v.ablation != "no_center_distance")
    modes = {v.name: v.spec.modes for v in vs}
    assert modes["dynamic_0.25"] == ("proximal", "holistic", "holistic")
    assert modes["dynamic_no_proximal_0.25"] == ("drop", "holistic", "holistic")
    assert modes["topk_0.25"] == ("drop",) * 3


@pytest.fixture(scope="module")
def tiny_task():
    config = cfg.get_config("tiny")
    sp = [v for v in train.variants(config) if v.name == "dynamic_0.5"][0].spec
    det = train.detector(config)
    params = fast_jit(det.init)(jax.random.key(0), jnp.zeros((1, 32, 32, 3)))
    return config, sp, params


def test_dynamic_train_step_with_teacher(tiny_task):
    config, sp, params = tiny_task
    task = train.make_task(config, sp, init_params=params, teacher=params, lr=1e-3, steps=4)
    key = jax.random.key(1)
    state = task.init_state(key)
    batch = task.batch_fn(0, slice(None))
    assert batch["images"].shape == (8, 32, 32, 3)
    step = fast_jit(task.train_step)
    new, metrics = step(state, batch, key)               # warm-up: learning rate 0 at step 0
    new, metrics = step(new, batch, key)
    assert all(np.isfinite(float(v)) for v in metrics.values())
    # the merged tokens are not the teacher's centroids, so the regulariser is active
    assert float(metrics["cd"]) > 0 and int(new["step"]) == 2
    moved = jax.tree.leaves(jax.tree.map(lambda a, b: float(jnp.abs(a - b).max()), new["params"], params))
    assert max(moved) > 0
    # the teacher is frozen
    for a, b in zip(jax.tree.leaves(new["teacher"]), jax.tree.leaves(params)):
        np.testing.assert_array_equal(a, b)


def test_encoder_flops_follow_the_budget(tiny_task):
    config, _, params = tiny_task
    dense = evaluate.encoder_cost(train.detector(config), params, 32, batch=2, repeats=1)
    half = [v for v in train.variants(config) if v.name == "topk_0.5"][0].spec
    sparse = evaluate.encoder_cost(train.detector(config, half), params, 32, batch=2, repeats=1)
    ratio = sparse["encoder_gflops"] / dense["encoder_gflops"]
    assert 0.3 < ratio < 0.7, ratio                   # half the tokens, some selection overhead
    assert dense["images_per_s"] > 0 and sparse["images_per_s"] > 0


def _row(name, method, budget, ap, gflops, ablation="none"):
    return {"name": name, "method": method, "budget": budget, "ablation": ablation, "AP": ap,
            "encoder_gflops": gflops}


def test_targets_logic():
    rows = [_row("dense", "dense", 1.0, 0.50, 10.0), _row("t", "topk", 0.25, 0.40, 4.0),
            _row("d", "dynamic", 0.25, 0.45, 5.0), _row("t5", "topk", 0.5, 0.49, 6.0),
            _row("d5", "dynamic", 0.5, 0.52, 6.5), _row("a", "dynamic", 0.25, 0.44, 5.0, "no_proximal"),
            _row("b", "dynamic", 0.25, 0.46, 5.0, "no_holistic")]
    t = reporting.targets(rows, (0.25, 0.5))
    assert t["dynamic_ge_topk"]["met"]
    assert t["flops_saving_at_dense_ap"]["met"] and t["flops_saving_at_dense_ap"]["saving"] == pytest.approx(0.35)
    assert not t["ablations_cost_ap"]["met"]                          # no_holistic is better
    rows[4]["AP"] = 0.48                                              # below top-k and dense now
    t = reporting.targets(rows, (0.25, 0.5))
    assert not t["dynamic_ge_topk"]["met"] and not t["flops_saving_at_dense_ap"]["met"]
    assert t["flops_saving_at_dense_ap"]["saving"] is None
    for r in rows:
        r.update(AP50=0.5, AP75=0.4, AP_S=0.1, AP_M=0.2, AP_L=-1.0, mean_keep=r["budget"],
                 tokens_per_block=[1], images_per_s=100.0)
    text = reporting.tables({"rows": rows, "targets": t, "pretrained_dense": {"AP": 0.3}, "tokens": 84,
                             "complete": False, "missing": ["focus_0.5"]})
    assert "AP(dynamic) ≥ AP(top-k) at every budget: **MISSED** (ρ=0.25: 0.450 vs 0.400, ρ=0.5: 0.480 vs 0.490)" in text
    assert "no dynamic run reached the dense AP" in text and "not yet measured: focus_0.5" in text


@pytest.mark.parametrize("key,value,message", [
    ("sparse.cascade", (1.5, 1.0), "mean must be 1"),
    ("data.image_size", 36, "divisible by 8"),
    ("data.max_objects", 9, "exceeds model.num_queries"),
    ("sparse.budgets", (0.9,), "budget × largest cascade factor"),
    ("sparse.ablations", ("no_such",), "sparse.ablations"),
])
def test_bad_config_is_refused_before_compute(key, value, message):
    config = cfg.get_config("tiny")
    block, name = key.split(".")
    config[block][name] = value
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(config, "/nonexistent/never/written")
