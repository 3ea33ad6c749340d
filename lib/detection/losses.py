"""Set-prediction losses of DETR-style detectors: sigmoid focal classification (Lin et al.
2017, as in Deformable DETR), L1 and GIoU on matched boxes, normalised by the number of
ground-truth objects in the batch."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.detection import boxes as bx


def sigmoid_focal(logits, targets, alpha: float = 0.25, gamma: float = 2.0):
    """Elementwise focal loss; logits and {0,1} targets of the same shape."""
    p = jax.nn.sigmoid(logits)
    ce = jnp.maximum(logits, 0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits)))
    p_t = p * targets + (1 - p) * (1 - targets)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return a_t * ce * (1 - p_t) ** gamma


def set_loss(logits, pred_boxes, labels, gt_boxes, valid, match, num_boxes):
    """Losses of one decoder layer given a matching.

    logits (B, Q, C), pred_boxes (B, Q, 4) cxcywh, labels (B, M) int, gt_boxes (B, M, 4),
    valid (B, M) bool, match (B, M) int (query per ground truth, -1 padding), num_boxes: a
    scalar normaliser (>= 1). Returns {"class", "l1", "giou"} scalars.
    """
    b, q, c = logits.shape
    ok = valid & (match >= 0)
    qidx = jnp.where(ok, match, 0)
    onehot = jax.nn.one_hot(labels, c) * ok[..., None]                    # (B, M, C)
    target = jnp.zeros((b, q, c)).at[jnp.arange(b)[:, None], qidx].add(onehot)
    target = jnp.clip(target, 0.0, 1.0)
    l_cls = sigmoid_focal(logits, target).sum() / num_boxes
    matched = jnp.take_along_axis(pred_boxes, qidx[..., None], axis=1)     # (B, M, 4)
    w = ok.astype(logits.dtype)
    l_l1 = (jnp.abs(matched - gt_boxes).sum(-1) * w).sum() / num_boxes
    g = bx.giou(bx.cxcywh_to_xyxy(matched), bx.cxcywh_to_xyxy(gt_boxes))
    l_giou = ((1 - g) * w).sum() / num_boxes
    return {"class": l_cls, "l1": l_l1, "giou": l_giou}
