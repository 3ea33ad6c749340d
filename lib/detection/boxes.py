"""Box conversions and (generalised) IoU.

Boxes are `(..., 4)` arrays, either `cxcywh` (centre, width, height) or `xyxy` (corners),
in any consistent unit (DETR uses coordinates normalised by the image size).
"""
from __future__ import annotations

import jax.numpy as jnp


def cxcywh_to_xyxy(b):
    cx, cy, w, h = jnp.moveaxis(b, -1, 0)
    return jnp.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=-1)


def xyxy_to_cxcywh(b):
    x0, y0, x1, y1 = jnp.moveaxis(b, -1, 0)
    return jnp.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], axis=-1)


def area(b_xyxy):
    return jnp.clip(b_xyxy[..., 2] - b_xyxy[..., 0], 0) * jnp.clip(b_xyxy[..., 3] - b_xyxy[..., 1], 0)


def _iou_parts(a, b):
    """a, b broadcastable `(..., 4)` xyxy -> (iou, union, enclosing area)."""
    lt = jnp.maximum(a[..., :2], b[..., :2])
    rb = jnp.minimum(a[..., 2:], b[..., 2:])
    wh = jnp.clip(rb - lt, 0)
    inter = wh[..., 0] * wh[..., 1]
    union = area(a) + area(b) - inter
    iou = inter / jnp.maximum(union, 1e-9)
    elt = jnp.minimum(a[..., :2], b[..., :2])
    erb = jnp.maximum(a[..., 2:], b[..., 2:])
    ewh = jnp.clip(erb - elt, 0)
    return iou, union, ewh[..., 0] * ewh[..., 1]


def giou(a_xyxy, b_xyxy):
    """Elementwise generalised IoU (Rezatofighi et al. 2019) of broadcastable xyxy boxes, in [-1, 1]."""
    iou, union, enclose = _iou_parts(a_xyxy, b_xyxy)
    return iou - (enclose - union) / jnp.maximum(enclose, 1e-9)


def pairwise_giou(a_xyxy, b_xyxy):
    """`(..., Q, 4)` x `(..., M, 4)` -> `(..., Q, M)` generalised IoU."""
    return giou(a_xyxy[..., :, None, :], b_xyxy[..., None, :, :])
