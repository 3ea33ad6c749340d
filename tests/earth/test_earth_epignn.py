"""EpiGNN baseline pieces (risk encoding, support Laplacian, equivariance) and the
best-validation / early-stopping selection of the EARTH task."""
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.earth import data as data_lib, epignn, training


PERM = np.array([3, 0, 4, 1, 2])


def test_global_risk_matches_a_hand_computed_case():
    # q kᵀ = [[1, 1], [0, 1]]; unit rows [1/√2, 1/√2], [0, 1]; row sums √2 and 1
    q = jnp.array([[1.0, 0.0], [0.0, 1.0]])
    k = jnp.array([[1.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(epignn.global_risk(q, k), [math.sqrt(2.0), 1.0], rtol=1e-6)


def test_support_laplacian_binarises_then_row_normalises():
    a = jnp.array([[0.0, 2.0, 0.5], [0.0, 0.0, 0.0], [3.0, 1e-3, 7.0]])
    want = np.array([[0, 0.5, 0.5], [0, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(epignn.support_laplacian(a), want, atol=1e-6)


def test_epignn_is_equivariant_to_relabelling_regions():
    rng = np.random.default_rng(0)
    a = (rng.uniform(size=(5, 5)) < 0.5).astype(np.float32)
    a = np.maximum(a, a.T)
    x = rng.uniform(size=(12, 5)).astype(np.float32)
    f = epignn.EpiGNN(a, k=3, hid_a=6)
    p = jax.jit(f.init)(jax.random.key(0), jnp.asarray(x))
    apply_f = jax.jit(f.apply)
    y = np.asarray(apply_f(p, x))
    assert y.shape == (5,)
    g = epignn.EpiGNN(a[np.ix_(PERM, PERM)], k=3, hid_a=6)
    q = jax.tree_util.tree_map_with_path(   # the region-indexed gate moves with the regions
        lambda path, v: v[np.ix_(PERM, PERM)] if "d_gate" in jax.tree_util.keystr(path) else v, p)
    np.testing.assert_allclose(np.asarray(jax.jit(g.apply)(q, x[:, PERM])), y[PERM], atol=1e-5)
    # the adjacency matters: relabelling the series but not the graph changes the forecast
    assert np.abs(np.asarray(apply_f(p, x[:, PERM])) - y[PERM]).max() > 1e-4


def test_update_selection_keeps_best_and_freezes_after_patience():
    st = {"params": {"w": jnp.array([[1.0], [2.0]])}, "step": jnp.int32(10),
          "best_params": {"w": jnp.array([[0.0], [0.0]])},
          "best_val": jnp.array([0.5, 0.5]), "best_step": jnp.array([3, 3]),
          "bad": jnp.array([0, 2])}
    # copy 0 improves (0.4 < 0.5); copy 1 would improve too, but is out of patience (bad = 2)
    out = training.update_selection(st, jnp.array([0.4, 0.1]), patience=2)
    np.testing.assert_array_equal(out["best_params"]["w"], [[1.0], [0.0]])
    np.testing.assert_allclose(out["best_val"], [0.4, 0.5])
    np.testing.assert_array_equal(out["best_step"], [10, 3])
    np.testing.assert_array_equal(out["bad"], [0, 2])
    # no improvement: the active copy counts one bad round, the frozen one stays
    out = training.update_selection(out, jnp.array([0.9, 0.9]), patience=2)
    np.testing.assert_array_equal(out["bad"], [1, 2])


def test_early_stop_clock_reads_the_last_active_count(tmp_path):
    clock = training.EarlyStopClock(str(tmp_path))
    assert clock() == -math.inf
    with open(tmp_path / "metrics.jsonl", "w") as f:
        f.write(json.dumps({"step": 4, "loss": 1.0, "active": 2.0}) + "\n")
        f.write(json.dumps({"step": 8, "val_x": 1.0}) + "\n")
    clock.on_log(8)
    assert clock() == -math.inf
    with open(tmp_path / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": 12, "loss": 1.0, "active": 0.0}) + "\n")
    clock.on_log(12)
    assert clock() == math.inf
    assert training.EarlyStopClock(str(tmp_path))() == math.inf   # a rerun stops at once


def test_floor_split_matches_epignn_loader():
    s = np.ones((785, 3)) + np.arange(785)[:, None]
    a = np.ones((3, 3))
    p = data_lib.prepare(s, a, train_frac=0.5, val_frac=0.2, window=20, horizons=(5,),
                         rounding="floor")
    assert (p.train_end, p.val_end) == (392, 549)        # int(392.5), int(549.5)
    assert data_lib.prepare(s, a, train_frac=0.5, val_frac=0.2, window=20,
                            horizons=(5,)).val_end == 550
    with pytest.raises(data_lib.DataError, match="split rounding"):
        data_lib.prepare(s, a, train_frac=0.5, val_frac=0.2, window=20, horizons=(5,),
                         rounding="ceil")


def test_temporal_conv_is_a_dilated_valid_convolution():
    rng = np.random.default_rng(2)
    x, w, b = rng.normal(size=(12, 2)), rng.normal(size=(3, 4)), rng.normal(size=4)
    out = np.asarray(epignn._temporal_conv(jnp.asarray(x), jnp.asarray(w), jnp.asarray(b), 2))
    assert out.shape == (8, 2, 4)                                # 12 − (3 − 1)·2 rows
    want = np.array([[[sum(x[t + 2 * j, n] * w[j, c] for j in range(3)) + b[c]
                       for c in range(4)] for n in range(2)] for t in range(8)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
