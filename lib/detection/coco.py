"""COCO-format annotations: validation, loading into padded arrays, and AP with pycocotools.

A COCO detection file is `{"images": [{id, width, height, file_name?}], "annotations":
[{id, image_id, category_id, bbox: [x, y, w, h] in pixels, area?, iscrowd?}],
"categories": [{id, name}]}`. `validate` raises `ValueError` naming the file and the first
problem (empty file, missing key, unknown image or category, a box with non-positive size
or outside its image) before anything is computed.
"""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np

# Tolerance (pixels) for a box edge past the image border (float rounding in exporters).
BORDER_TOL = 1e-3


def validate(data: dict, source: str = "annotations") -> None:
    for key in ("images", "annotations", "categories"):
        if key not in data:
            raise ValueError(f"{source}: missing top-level key {key!r}")
    if not data["images"]:
        raise ValueError(f"{source}: empty annotation file (no images)")
    if not data["annotations"]:
        raise ValueError(f"{source}: empty annotation file (no annotations)")
    if not data["categories"]:
        raise ValueError(f"{source}: no categories")
    images = {im["id"]: im for im in data["images"]}
    cats = {c["id"] for c in data["categories"]}
    for a in data["annotations"]:
        aid = a.get("id")
        if a.get("image_id") not in images:
            raise ValueError(f"{source}: annotation {aid} refers to unknown image_id {a.get('image_id')!r}")
        if a.get("category_id") not in cats:
            raise ValueError(f"{source}: annotation {aid} has unknown category_id {a.get('category_id')!r}")
        bbox = a.get("bbox")
        if bbox is None or len(bbox) != 4:
            raise ValueError(f"{source}: annotation {aid} needs bbox = [x, y, w, h], got {bbox!r}")
        x, y, w, h = (float(v) for v in bbox)
        if not (w > 0 and h > 0):
            raise ValueError(f"{source}: annotation {aid} has a box of non-positive size {bbox!r}")
        im = images[a["image_id"]]
        if (x < -BORDER_TOL or y < -BORDER_TOL or x + w > im["width"] + BORDER_TOL
                or y + h > im["height"] + BORDER_TOL):
            raise ValueError(f"{source}: annotation {aid} box {bbox!r} lies outside image "
                             f"{im['id']} of size {im['width']}x{im['height']}")


def load(path: str) -> dict:
    """Read and validate a COCO JSON file; returns the dict."""
    with open(path) as f:
        data = json.load(f)
    validate(data, path)
    return data


def to_arrays(data: dict, max_objects: int) -> dict:
    """Per-image padded targets in the order of `data["images"]`.

    Returns {"image_ids" (n,), "sizes" (n, 2) as (height, width), "boxes" (n, M, 4) cxcywh
    normalised by the image size, "labels" (n, M) contiguous indices into the sorted
    category ids, "valid" (n, M) bool, "category_ids" (C,)}. Crowd annotations are skipped.
    Raises ValueError when an image has more than `max_objects` objects.
    """
    cat_ids = sorted(c["id"] for c in data["categories"])
    cat_index = {c: i for i, c in enumerate(cat_ids)}
    by_image: dict = {im["id"]: [] for im in data["images"]}
    for a in data["annotations"]:
        if not a.get("iscrowd", 0):
            by_image[a["image_id"]].append(a)
    n = len(data["images"])
    boxes = np.zeros((n, max_objects, 4), np.float32)
    labels = np.zeros((n, max_objects), np.int32)
    valid = np.zeros((n, max_objects), bool)
    sizes = np.zeros((n, 2), np.int32)
    for i, im in enumerate(data["images"]):
        anns = by_image[im["id"]]
        if len(anns) > max_objects:
            raise ValueError(f"image {im['id']} has {len(anns)} objects > max_objects={max_objects}")
        hgt, wid = im["height"], im["width"]
        sizes[i] = (hgt, wid)
        for j, a in enumerate(anns):
            x, y, w, h = a["bbox"]
            boxes[i, j] = ((x + w / 2) / wid, (y + h / 2) / hgt, w / wid, h / hgt)
            labels[i, j] = cat_index[a["category_id"]]
            valid[i, j] = True
    return {"image_ids": np.array([im["id"] for im in data["images"]]), "sizes": sizes,
            "boxes": boxes, "labels": labels, "valid": valid, "category_ids": np.array(cat_ids)}


def from_arrays(boxes_xyxy, labels, valid, *, height: int, width: int, category_names) -> dict:
    """A COCO dict from padded pixel boxes (n, M, 4) xyxy, labels (n, M), valid (n, M);
    image ids 1..n, category ids 1..C. Validated before it is returned."""
    images, anns = [], []
    for i in range(len(boxes_xyxy)):
        images.append({"id": i + 1, "width": int(width), "height": int(height),
                       "file_name": f"{i + 1:06d}.png"})
        for b, l, v in zip(boxes_xyxy[i], labels[i], valid[i]):
            if not v:
                continue
            x0, y0, x1, y1 = (float(t) for t in b)
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": int(l) + 1,
                         "bbox": [x0, y0, x1 - x0, y1 - y0], "area": (x1 - x0) * (y1 - y0),
                         "iscrowd": 0})
    data = {"images": images, "annotations": anns,
            "categories": [{"id": k + 1, "name": n} for k, n in enumerate(category_names)]}
    validate(data, "generated annotations")
    return data


def detections(image_ids, boxes_xyxy, scores, labels, category_ids) -> list[dict]:
    """COCO result list from per-image arrays: boxes (n, K, 4) pixel xyxy, scores (n, K),
    labels (n, K) contiguous indices (mapped through `category_ids`)."""
    out = []
    for i, im in enumerate(image_ids):
        for b, s, l in zip(boxes_xyxy[i], scores[i], labels[i]):
            x0, y0, x1, y1 = (float(t) for t in b)
            out.append({"image_id": int(im), "category_id": int(category_ids[int(l)]),
                        "bbox": [x0, y0, x1 - x0, y1 - y0], "score": float(s)})
    return out


METRICS = ("AP", "AP50", "AP75", "AP_S", "AP_M", "AP_L")


def evaluate(gt: dict, dets: list[dict], *, area_scale: float = 1.0, max_dets: int = 100) -> dict:
    """COCO box AP with pycocotools' COCOeval: {AP, AP50, AP75, AP_S, AP_M, AP_L} in [0, 1]
    (-1 where no ground truth falls into a size range).

    `area_scale` multiplies COCO's small/medium/large area thresholds (32², 96²), e.g.
    `(image_size / 256)**2` for small synthetic images; 1 is standard COCO. An empty
    detection list gives AP 0 (nothing detected) without calling loadRes, which rejects it.
    """
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = json.loads(json.dumps(gt))
        coco_gt.createIndex()
        if not dets:
            return {m: 0.0 for m in METRICS}
        coco_dt = coco_gt.loadRes(json.loads(json.dumps(dets)))
        ev = COCOeval(coco_gt, coco_dt, "bbox")
        big = 1e5 ** 2
        s, m = 32 ** 2 * area_scale, 96 ** 2 * area_scale
        ev.params.areaRng = [[0, big], [0, s], [s, m], [m, big]]
        ev.params.maxDets = [1, 10, max_dets]
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return {name: float(v) for name, v in zip(METRICS, ev.stats[:6])}
