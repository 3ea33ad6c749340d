"""Hungarian matching of DETR queries to ground-truth objects (Carion et al. 2020, Eq. 1).

The cost matrix is computed in JAX (inside `jit`); the assignment itself runs on the host
with `scipy.optimize.linear_sum_assignment` through `jax.pure_callback`, so the train step
stays one jitted function with static shapes: every ground-truth slot gets a query index,
padding slots get -1.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import linear_sum_assignment

from lib.detection import boxes as bx


def focal_class_cost(logits, labels, alpha: float = 0.25, gamma: float = 2.0):
    """Deformable-DETR classification cost. logits (..., Q, C), labels (..., M) -> (..., Q, M)."""
    p = jax.nn.sigmoid(logits)
    # -log p = softplus(-x), -log(1 - p) = softplus(x): finite for confident logits, where
    # 1 - p + eps would round to 0 in float32 once XLA reassociates it.
    pos = alpha * (1 - p) ** gamma * jax.nn.softplus(-logits)
    neg = (1 - alpha) * p ** gamma * jax.nn.softplus(logits)
    cost = pos - neg                                            # (..., Q, C)
    return jnp.take_along_axis(cost, jnp.broadcast_to(labels[..., None, :], cost.shape[:-1] + labels.shape[-1:]), axis=-1)


def matching_cost(logits, pred_boxes, labels, gt_boxes, *, w_class: float, w_l1: float,
                  w_giou: float):
    """Cost (..., Q, M) = w_class·focal + w_l1·|b - b̂|_1 + w_giou·(-GIoU); boxes cxcywh."""
    c_cls = focal_class_cost(logits, labels)
    c_l1 = jnp.abs(pred_boxes[..., :, None, :] - gt_boxes[..., None, :, :]).sum(-1)
    c_giou = -bx.pairwise_giou(bx.cxcywh_to_xyxy(pred_boxes), bx.cxcywh_to_xyxy(gt_boxes))
    return w_class * c_cls + w_l1 * c_l1 + w_giou * c_giou


def assign_numpy(cost: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Minimum-cost assignment per leading index. cost (..., Q, M), valid (..., M) bool ->
    (..., M) int32: the query matched to each valid ground truth, -1 for padding.

    Raises ValueError when an image has more valid objects than queries.
    """
    cost = np.asarray(cost, np.float64)
    valid = np.asarray(valid, bool)
    lead = cost.shape[:-2]
    q, m = cost.shape[-2:]
    n = int(np.prod(lead, dtype=np.int64))     # not reshape(-1, ...): ambiguous when m == 0
    flat_c, flat_v = cost.reshape(n, q, m), valid.reshape(n, m)
    out = np.full(flat_v.shape, -1, np.int32)
    for i in range(flat_c.shape[0]):
        cols = np.flatnonzero(flat_v[i])
        if cols.size > q:
            raise ValueError(f"{cols.size} objects but only {q} queries; raise the query count")
        if cols.size == 0:
            continue
        rows, gts = linear_sum_assignment(flat_c[i][:, cols])
        out[i, cols[gts]] = rows
    return out.reshape(lead + (m,))


def assign(cost, valid):
    """`assign_numpy` as a host callback usable inside `jit`; no gradient flows through it."""
    cost = jax.lax.stop_gradient(cost)
    shape = jax.ShapeDtypeStruct(valid.shape, jnp.int32)
    return jax.pure_callback(assign_numpy, shape, cost, valid, vmap_method="sequential")
