"""The in-graph Hungarian matcher (`lib.detection.assignment.assign_jax`) against scipy's
optimum, brute force, and the host-callback matcher it replaces; the `loss.matcher` option."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from configs.dynamic_detr import dynamic_detr
from lib.common.config import ConfigError
from lib.detection import assignment, matching
from lib.dynamic_detr import objectives
from lib.dynamic_detr.config_schema import validate

assign = jax.jit(assignment.assign_jax)


def _check_optimal(cost, valid, got):
    """got (B, M) is injective, -1 exactly on padding, and its total cost is scipy's optimum."""
    for c, v, g in zip(cost, valid, got):
        cols = np.flatnonzero(v)
        assert np.all((g >= 0) == v), (g, v)
        assert len(set(g[cols].tolist())) == cols.size
        assert np.all(g[cols] < c.shape[0])
        rows, gts = linear_sum_assignment(c[:, cols].astype(np.float64))
        best = c[:, cols][rows, gts].astype(np.float64).sum()
        total = c[g[cols], cols].astype(np.float64).sum()
        np.testing.assert_allclose(total, best, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(c).max(initial=0.0)))


def _masks(rng, b, q, m):
    """Random valid masks with at most q objects, plus the all-valid and all-padding rows."""
    v = rng.random((b, m)) < 0.6
    v[0], v[1] = True, False
    for row in v:
        row[np.flatnonzero(row)[q:]] = False
    return v


@pytest.mark.parametrize("q,m", [(5, 3), (4, 4), (6, 0), (9, 6)])
def test_matches_scipy_optimum_random_and_tied(q, m):
    rng = np.random.default_rng(q * 10 + m)
    cost = rng.normal(size=(24, q, m)).astype(np.float32)
    cost[12:] = np.round(cost[12:] * 1.5)              # many ties: any optimal answer is fine
    valid = _masks(rng, 24, q, m)
    got = np.asarray(assign(cost, valid))
    assert got.shape == (24, m) and got.dtype == np.int32
    _check_optimal(cost, valid, got)


def test_large_magnitude_float32_costs():
    rng = np.random.default_rng(1)
    cost = (1e6 * rng.random((24, 5, 3)) + 3e7).astype(np.float32)
    valid = _masks(rng, 24, 5, 3)
    _check_optimal(cost, valid, np.asarray(assign(cost, valid)))


def test_equals_brute_force_on_tiny_problems():
    rng = np.random.default_rng(2)
    cost = rng.random((24, 4, 4)).astype(np.float32)
    valid = _masks(rng, 24, 4, 4)
    got = np.asarray(assign(cost, valid))
    for c, v, g in zip(cost, valid, got):
        cols = np.flatnonzero(v)
        best = min(sum(c[p[k], j] for k, j in enumerate(cols))
                   for p in itertools.permutations(range(4), cols.size))
        np.testing.assert_allclose(c[g[cols], cols].sum(), best, rtol=1e-6)


def test_agrees_with_callback_matcher_inside_jit_and_vmap():
    rng = np.random.default_rng(3)
    cost = rng.normal(size=(3, 4, 9, 6)).astype(np.float32)   # (L, B, Q, M), unique optima
    valid = np.broadcast_to(_masks(rng, 4, 9, 6), (3, 4, 6))

    @jax.jit
    def both(c, v):
        inner = jax.vmap(lambda ci, vi: (assignment.assign_jax(ci, vi), matching.assign(ci, vi)))
        return inner(c, v)

    ours, ref = both(cost, valid)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))


def test_more_objects_than_queries():
    cost = np.random.default_rng(4).normal(size=(2, 3, 5)).astype(np.float32)
    valid = np.array([[True, False, True, True, True], [True, True, False, False, False]])
    with pytest.raises(ValueError, match="4 objects but only 3 queries"):
        assignment.assign_jax(cost, valid)
    # traced: no error possible; the first Q valid slots are matched optimally, the rest -1
    got = np.asarray(jax.jit(assignment.assign_jax)(cost, valid))
    assert got[0, 4] == -1
    first = valid.copy()
    first[0, 4] = False
    _check_optimal(cost, first, got)


def test_non_finite_costs_still_end_with_an_injective_result():
    cost = np.random.default_rng(6).normal(size=(24, 5, 3)).astype(np.float32)
    cost[::2, 1:, 0] = np.nan
    cost[1::2, :, 1] = np.inf
    got = np.asarray(assign(cost, np.ones((24, 3), bool)))
    for g in got:
        assert len(set(g[g >= 0].tolist())) == (g >= 0).sum() and np.all(g < 5)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="disagree"):
        assignment.assign_jax(np.zeros((2, 3, 4)), np.ones((2, 5), bool))


def test_loss_and_gradient_agree_between_matchers():
    rng = np.random.default_rng(5)
    ldec, b, q, c, m, n = 2, 3, 6, 4, 3, 10
    batch = {"boxes": jnp.asarray(rng.uniform(0.2, 0.5, (b, m, 4)), jnp.float32),
             "labels": jnp.asarray(rng.integers(0, c, (b, m)), jnp.int32),
             "valid": jnp.asarray(_masks(rng, b, q, m))}
    centre = jnp.asarray(rng.random((n, 2)), jnp.float32)
    scores = jnp.asarray(rng.normal(size=(b, n)), jnp.float32)
    orig = jnp.tile(jnp.arange(n), (b, 1))
    w = {"class": 2.0, "l1": 5.0, "giou": 2.0, "obj": 1.0, "cd": 0.0}
    logits = jnp.asarray(rng.normal(size=(ldec, b, q, c)), jnp.float32)
    boxes = jnp.asarray(rng.uniform(0.1, 0.6, (ldec, b, q, 4)), jnp.float32)

    def loss(lg, bx, matcher):
        out = {"logits": lg, "boxes": bx, "scores": [(scores, orig)]}
        return objectives.detection_loss(out, batch, centre, w, matcher=matcher)[0]

    grad = {k: jax.jit(jax.value_and_grad(lambda lg, bx, k=k: loss(lg, bx, k), argnums=(0, 1)))
            for k in ("scipy", "jax")}
    (l_s, g_s), (l_j, g_j) = grad["scipy"](logits, boxes), grad["jax"](logits, boxes)
    np.testing.assert_allclose(l_j, l_s, rtol=1e-6)
    for a, r in zip(g_j, g_s):
        np.testing.assert_allclose(a, r, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="matcher 'hungary'"):
        loss(logits, boxes, "hungary")


def test_config_option_is_validated():
    config = dynamic_detr.get_config("tiny")
    assert config.loss.matcher == "scipy"          # default: existing results unchanged
    config.loss.matcher = "jax"
    validate(config)
    config.loss.matcher = "lapjv"
    with pytest.raises(ConfigError, match="matcher"):
        validate(config)
