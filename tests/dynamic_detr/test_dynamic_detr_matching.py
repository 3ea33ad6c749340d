"""Hungarian matching equals brute force; box and set-loss closed forms."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.detection import boxes as bx, losses, matching


def _brute_force(cost, valid):
    """Minimum total cost over all injective maps from valid ground truths to queries."""
    cols = np.flatnonzero(valid)
    best, best_val = None, np.inf
    for perm in itertools.permutations(range(cost.shape[0]), len(cols)):
        v = sum(cost[q, g] for q, g in zip(perm, cols))
        if v < best_val - 1e-12:
            best, best_val = perm, v
    return best_val, best, cols


@pytest.mark.parametrize("seed", range(6))
def test_hungarian_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    q, m = rng.integers(3, 6), 3
    cost = rng.normal(size=(2, q, m))
    valid = rng.uniform(size=(2, m)) < 0.7
    valid[0, 0] = True
    got = matching.assign_numpy(cost, valid)
    for b in range(2):
        best_val, _, cols = _brute_force(cost[b], valid[b])
        assert (got[b][~valid[b]] == -1).all()
        assigned = got[b][cols]
        assert len(set(assigned)) == len(cols) and (assigned >= 0).all()
        np.testing.assert_allclose(sum(cost[b, assigned[i], c] for i, c in enumerate(cols)), best_val)


def test_hungarian_inside_jit_matches_host():
    rng = np.random.default_rng(10)
    cost = rng.normal(size=(3, 2, 5, 3)).astype(np.float32)
    valid = rng.uniform(size=(3, 2, 3)) < 0.8
    got = jax.jit(matching.assign)(jnp.asarray(cost), jnp.asarray(valid))
    np.testing.assert_array_equal(got, matching.assign_numpy(cost, valid))


def test_too_many_objects_is_a_clear_error():
    with pytest.raises(ValueError, match="4 objects but only 3 queries"):
        matching.assign_numpy(np.zeros((3, 4)), np.ones(4, bool))


def test_giou_closed_forms():
    a = jnp.asarray([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 2.0], [0.0, 0, 1, 1]])
    b = jnp.asarray([[0.0, 0.0, 2.0, 2.0], [1.0, 0.0, 3.0, 2.0], [2.0, 0, 3, 1]])
    # identical: 1; half-overlapping: IoU = 2/6 and enclosing = union, so 1/3;
    # disjoint with a gap: IoU 0, union 2, enclosing 3, so -1/3
    np.testing.assert_allclose(jax.jit(bx.giou)(a, b), [1.0, 1 / 3, -1 / 3], rtol=1e-6)
    c = jnp.asarray([[0.5, 0.4, 0.2, 0.3]])
    np.testing.assert_allclose(bx.xyxy_to_cxcywh(bx.cxcywh_to_xyxy(c)), c, atol=1e-7)


def test_set_loss_of_a_perfect_prediction():
    gt = jnp.asarray([[[0.3, 0.3, 0.2, 0.2], [0.7, 0.6, 0.1, 0.3]]])
    pred = jnp.asarray([[[0.5, 0.5, 0.1, 0.1], [0.7, 0.6, 0.1, 0.3], [0.3, 0.3, 0.2, 0.2]]])
    labels = jnp.asarray([[1, 0]])
    logits = jnp.full((1, 3, 2), -20.0).at[0, 2, 1].set(20.0).at[0, 1, 0].set(20.0)
    valid = jnp.ones((1, 2), bool)

    @jax.jit
    def run(logits, pred, labels, gt):
        cost = matching.matching_cost(logits, pred, labels, gt, w_class=2.0, w_l1=5.0, w_giou=2.0)
        match = matching.assign(cost, valid)
        return match, losses.set_loss(logits, pred, labels, gt, valid, match, 2.0)

    match, parts = run(logits, pred, labels, gt)
    np.testing.assert_array_equal(match, [[2, 1]])
    assert float(parts["l1"]) < 1e-6 and float(parts["giou"]) < 1e-6 and float(parts["class"]) < 1e-6


def test_focal_cost_finite_for_confident_logits():
    logits = jnp.asarray([[[30.0, -30.0], [-30.0, 30.0]]])
    cost = jax.jit(matching.focal_class_cost)(logits, jnp.asarray([[0, 1]]))
    assert np.isfinite(np.asarray(cost)).all()
    # a confident correct class costs less than a confident wrong one
    assert cost[0, 0, 0] < cost[0, 1, 0] and cost[0, 1, 1] < cost[0, 0, 1]


def test_assign_numpy_with_no_ground_truth_slots_keeps_the_batch_shape():
    out = matching.assign_numpy(np.zeros((2, 3, 5, 0)), np.zeros((2, 3, 0), bool))
    assert out.shape == (2, 3, 0) and out.dtype == np.int32
