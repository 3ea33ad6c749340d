"""Procedurally rendered detection images with COCO-format annotations.

Each image (size × size RGB in [0, 1]) has a textured background (smooth noise plus a
random sinusoidal grating) and `min_objects..max_objects` filled shapes of `num_classes`
classes (circle, square, triangle, ring, bar, cross) at random scales, colours and places.
Shapes are painted in order, so later ones occlude earlier ones; placements whose box IoU
with an earlier object exceeds `max_overlap` are redrawn, which keeps partial occlusion
but no hidden objects. Boxes are the tight pixel extents of each full shape (COCO keeps the
full extent of occluded objects too). Everything is a pure function of the seed.
"""
from __future__ import annotations

import numpy as np

CLASSES = ("circle", "square", "triangle", "ring", "bar", "cross")


def _shape_mask(cls: str, yy, xx, cy, cx, r):
    dy, dx = yy - cy, xx - cx
    if cls == "circle":
        return dx ** 2 + dy ** 2 <= r ** 2
    if cls == "square":
        return (np.abs(dx) <= r * 0.85) & (np.abs(dy) <= r * 0.85)
    if cls == "triangle":
        return (dy <= r * 0.8) & (dy >= -r) & (np.abs(dx) <= (dy + r) * 0.55)
    if cls == "ring":
        d2 = dx ** 2 + dy ** 2
        return (d2 <= r ** 2) & (d2 >= (0.55 * r) ** 2)
    if cls == "bar":
        return (np.abs(dx) <= r) & (np.abs(dy) <= r * 0.35)
    if cls == "cross":
        return ((np.abs(dx) <= r) & (np.abs(dy) <= r * 0.3)) | ((np.abs(dy) <= r) & (np.abs(dx) <= r * 0.3))
    raise ValueError(f"unknown shape class {cls!r}; known: {CLASSES}")


def _background(rng, size):
    g = rng.uniform(0, 1, size=(size // 8 + 2, size // 8 + 2, 3))
    t = np.linspace(0, g.shape[0] - 2, size)
    i0 = np.floor(t).astype(int)
    f = (t - i0)[:, None]
    rows = g[i0] * (1 - f[..., None]) + g[i0 + 1] * f[..., None]          # (size, g, 3)
    cols = rows[:, i0] * (1 - f[None, :, :]) + rows[:, i0 + 1] * f[None, :, :]
    yy, xx = np.mgrid[0:size, 0:size]
    ang, freq = rng.uniform(0, np.pi), rng.uniform(0.15, 0.6)
    grating = np.sin(freq * (np.cos(ang) * xx + np.sin(ang) * yy))[..., None]
    return 0.25 + 0.35 * cols + 0.1 * grating * rng.uniform(0.3, 1.0, size=3)


def render(rng: np.random.Generator, *, size: int, num_classes: int, min_objects: int,
           max_objects: int, min_scale: float, max_scale: float, max_overlap: float = 0.3):
    """One image: (image (size, size, 3) float32, boxes (n, 4) pixel xyxy, labels (n,) int)."""
    img = _background(rng, size)
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    n = rng.integers(min_objects, max_objects + 1)
    boxes, labels = [], []
    for _ in range(n):
        for _try in range(30):
            c = int(rng.integers(num_classes))
            r = rng.uniform(min_scale, max_scale) / 2
            cy, cx = rng.uniform(r * 0.5, size - r * 0.5, size=2)
            mask = _shape_mask(CLASSES[c], yy, xx, cy, cx, r)
            if mask.sum() < 4:
                continue
            ys, xs = np.nonzero(mask)
            box = np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1], np.float32)
            if boxes and _max_iou(box, np.array(boxes)) > max_overlap:
                continue
            colour = rng.uniform(0, 1, size=3)
            colour[rng.integers(3)] = rng.choice([0.05, 0.95])           # saturated, visible
            img[mask] = colour
            boxes.append(box)
            labels.append(c)
            break
    img = np.clip(img + rng.normal(0, 0.03, size=img.shape), 0, 1).astype(np.float32)
    return img, np.array(boxes, np.float32).reshape(-1, 4), np.array(labels, np.int32)


def _max_iou(box, others):
    lt = np.maximum(box[:2], others[:, :2])
    rb = np.minimum(box[2:], others[:, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=1)
    a = np.prod(box[2:] - box[:2])
    b = np.prod(others[:, 2:] - others[:, :2], axis=1)
    return float(np.max(inter / (a + b - inter)))


def batch(seed, count: int, *, size: int, num_classes: int, min_objects: int, max_objects: int,
          min_scale: float, max_scale: float) -> dict:
    """`count` images from `np.random.default_rng(seed)` as padded arrays:
    {"images" (n, size, size, 3), "boxes" (n, M, 4) normalised cxcywh, "boxes_xyxy" (n, M, 4)
    pixels, "labels" (n, M), "valid" (n, M) bool} with M = max_objects."""
    if num_classes > len(CLASSES):
        raise ValueError(f"num_classes={num_classes} but only {len(CLASSES)} shape classes exist")
    rng = np.random.default_rng(seed)
    imgs = np.zeros((count, size, size, 3), np.float32)
    xyxy = np.zeros((count, max_objects, 4), np.float32)
    labels = np.zeros((count, max_objects), np.int32)
    valid = np.zeros((count, max_objects), bool)
    for i in range(count):
        im, b, l = render(rng, size=size, num_classes=num_classes, min_objects=min_objects,
                          max_objects=max_objects, min_scale=min_scale, max_scale=max_scale)
        imgs[i], xyxy[i, :len(b)], labels[i, :len(b)], valid[i, :len(b)] = im, b, l, True
    cxcywh = np.stack([(xyxy[..., 0] + xyxy[..., 2]) / 2, (xyxy[..., 1] + xyxy[..., 3]) / 2,
                       xyxy[..., 2] - xyxy[..., 0], xyxy[..., 3] - xyxy[..., 1]], -1) / size
    return {"images": imgs, "boxes": cxcywh.astype(np.float32), "boxes_xyxy": xyxy,
            "labels": labels, "valid": valid}
