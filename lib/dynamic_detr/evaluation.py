"""Evaluation: detections -> COCO AP (pycocotools), encoder FLOPs from XLA's cost
analysis, and measured encoder throughput."""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from lib.detection import boxes as bx, coco
from lib.dynamic_detr.model import Detector


def top_detections(logits, boxes, image_size: int, max_dets: int = 100):
    """Final-layer outputs logits (B, Q, C), boxes (B, Q, 4) cxcywh in [0, 1] -> the best
    min(max_dets, Q·C) (query, class) pairs per image: pixel xyxy boxes (B, K, 4), scores
    (B, K), labels (B, K)."""
    b, q, c = logits.shape
    k = min(max_dets, q * c)
    prob = jax.nn.sigmoid(logits).reshape(b, q * c)
    scores, flat = jax.lax.top_k(prob, k)
    qi, labels = flat // c, flat % c
    sel = jnp.take_along_axis(boxes, qi[..., None], 1)
    xyxy = jnp.clip(bx.cxcywh_to_xyxy(sel), 0.0, 1.0) * image_size
    return xyxy, scores, labels


def predict(det: Detector, params, images, batch_size: int):
    """Detections for all `images` (n, S, S, 3), in batches under one jit."""
    @jax.jit
    def run(p, x):
        out = det.apply(p, x)
        return top_detections(out["logits"][-1], out["boxes"][-1], det.image_size)

    parts = [jax.device_get(run(params, jnp.asarray(images[i:i + batch_size])))
             for i in range(0, len(images), batch_size)]
    return tuple(np.concatenate([p[j] for p in parts]) for j in range(3))


def average_precision(det: Detector, params, val: dict, gt: dict, *, batch_size: int,
                      area_scale: float) -> dict:
    xyxy, scores, labels = predict(det, params, val["images"], batch_size)
    ids = [im["id"] for im in gt["images"]]
    cats = [c["id"] for c in gt["categories"]]
    return coco.evaluate(gt, coco.detections(ids, xyxy, scores, labels, cats), area_scale=area_scale)


def _flops(compiled) -> float:
    cost = compiled.cost_analysis()
    if isinstance(cost, (list, tuple)):
        cost = cost[0]
    return float(cost["flops"])


def encoder_cost(det: Detector, params, image_size: int, *, batch: int, repeats: int) -> dict:
    """Encoder FLOPs per image (XLA cost analysis of the compiled `Detector.encode`, from
    backbone tokens to decoder memory, at batch `batch`, divided by `batch`) and measured
    encoder images/s at `batch` (median of `repeats` timed calls after one warm-up call).
    One compile serves both, which matters where compiles dominate (a short GPU slot)."""
    def enc(p, x0, pos):
        return det.apply(p, x0, pos, method=Detector.encode)["memory"]

    images = jnp.zeros((1, image_size, image_size, 3))
    x0, pos = det.apply(params, images, method=Detector.tokens)
    xb, pb = (jnp.broadcast_to(t, (batch,) + t.shape[1:]) for t in (x0, pos))
    f = jax.jit(enc).lower(params, xb, pb).compile()
    flops = _flops(f) / batch
    f(params, xb, pb).block_until_ready()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f(params, xb, pb).block_until_ready()
        times.append(time.perf_counter() - t)
    return {"encoder_gflops": flops / 1e9, "images_per_s": batch / float(np.median(times))}


def validation_set(config) -> tuple[dict, dict]:
    """The held-out images every variant is evaluated on, and their COCO ground truth."""
    from lib.dynamic_detr.data import CLASSES, batch
    from lib.dynamic_detr.training import data_kwargs
    d = config.data
    val = batch([config.train.seed, 11], d.val_images, **data_kwargs(config))
    gt = coco.from_arrays(val["boxes_xyxy"], val["labels"], val["valid"], height=d.image_size,
                          width=d.image_size, category_names=CLASSES[:d.num_classes])
    return val, gt


def variant_row(config, v, det: Detector, params, val: dict, gt: dict, steps: int,
                n: int) -> dict:
    """The results row of fine-tuned variant `v` (a `training.Variant`): COCO AP on `val`,
    encoder FLOPs and throughput, its token counts per block out of `n`."""
    e = config.eval
    ap = average_precision(det, params, val, gt, batch_size=e.batch_size, area_scale=e.area_scale)
    cost = encoder_cost(det, params, config.data.image_size, batch=e.throughput_batch,
                        repeats=e.throughput_repeats)
    counts = v.spec.counts(n, config.model.enc_layers)
    return {"name": v.name, "method": v.method, "budget": v.budget, "ablation": v.ablation,
            "tokens_per_block": list(counts), "mean_keep": float(np.mean(counts) / n),
            "finetune_steps": steps, **ap, **cost}
