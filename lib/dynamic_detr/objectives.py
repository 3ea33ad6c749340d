"""Training objective: DETR set loss on every decoder layer, objectness supervision of
the importance scores, and the centre-distance regulariser (Eq. D6 of the README).

    L = Σ_layers [w_cls·focal + w_l1·L1 + w_giou·(1 − GIoU)]      (Hungarian-matched per layer)
      + w_obj · BCE(importance logits, token centre inside a ground-truth box; 0 for a
                    context slot, which pools dropped tokens)
      + λ_cd · Σ_k n_k ‖x_k − c_k‖² / (D Σ_k n_k),  c_k = mean of the dense teacher's
        memory over the n_k original tokens whose final slot is k.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from lib.detection import assignment, losses, matching

MATCHERS = {"scipy": matching.assign, "jax": assignment.assign_jax}


def foreground(centre, gt_boxes, valid):
    """Objectness target (B, N): 1 where the token centre (N, 2) lies inside a valid
    ground-truth box (B, M, 4) cxcywh (both normalised)."""
    c = centre[None, :, None, :]
    g = gt_boxes[:, None, :, :]
    inside = (jnp.abs(c - g[..., :2]) <= g[..., 2:] / 2).all(-1) & valid[:, None, :]
    return inside.any(-1).astype(jnp.float32)


def objectness_target(fg, orig):
    """Target (B, K) of the current tokens' scores: fg (B, N) of the original token each
    stands for (orig (B, K)); 0 for a context slot (orig -1), which pools dropped tokens."""
    padded = jnp.pad(fg, ((0, 0), (0, 1)))
    return jnp.take_along_axis(padded, jnp.where(orig < 0, fg.shape[1], orig), 1)


def center_distance(tokens_final, ptr, teacher_memory):
    """Eq. D6: size-weighted squared distance between each final sparse token (B, K, D)
    and the centroid of the dense teacher memory (B, N, D) over the original tokens it
    represents (ptr (B, N), -1 = dropped)."""
    k, d = tokens_final.shape[1], tokens_final.shape[2]
    assign = jax.nn.one_hot(ptr, k) * (ptr >= 0)[..., None]               # (B, N, K)
    n_k = assign.sum(1)                                                    # (B, K)
    centroid = jnp.einsum("bnk,bnd->bkd", assign, teacher_memory) / jnp.maximum(n_k, 1)[..., None]
    dist = ((tokens_final - centroid) ** 2).sum(-1)
    return (dist * n_k).sum() / (d * jnp.maximum(n_k.sum(), 1))


def detection_loss(out, batch, centre, w: dict, teacher_memory=None, matcher: str = "scipy"):
    """Total loss and named parts. `out` from `Detector.__call__`; batch with "boxes",
    "labels", "valid"; `w` weights {class, l1, giou, obj, cd}; centre (N, 2). `matcher`
    (config `loss.matcher`) picks the Hungarian assignment: "scipy" (host callback) or
    "jax" (in-graph); both give an optimal matching, ties may be broken differently."""
    if matcher not in MATCHERS:
        raise ValueError(f"matcher {matcher!r} is not one of {sorted(MATCHERS)}")
    logits, boxes = out["logits"], out["boxes"]
    cost = matching.matching_cost(logits, boxes, jnp.broadcast_to(batch["labels"], logits.shape[:2] + batch["labels"].shape[1:]),
                                  jnp.broadcast_to(batch["boxes"], boxes.shape[:2] + batch["boxes"].shape[1:]),
                                  w_class=w["class"], w_l1=w["l1"], w_giou=w["giou"])
    valid = jnp.broadcast_to(batch["valid"], cost.shape[:2] + batch["valid"].shape[1:])
    match = MATCHERS[matcher](cost, valid)                                 # (Ldec, B, M)
    num = jnp.maximum(batch["valid"].sum(), 1.0)
    parts = {"class": 0.0, "l1": 0.0, "giou": 0.0}
    for l in range(logits.shape[0]):
        p = losses.set_loss(logits[l], boxes[l], batch["labels"], batch["boxes"], batch["valid"],
                            match[l], num)
        parts = {k: parts[k] + p[k] for k in parts}
    fg = foreground(centre, batch["boxes"], batch["valid"])
    obj = 0.0
    for s, orig in out["scores"]:
        obj = obj + optax.sigmoid_binary_cross_entropy(s, objectness_target(fg, orig)).mean()
    parts["obj"] = obj / len(out["scores"])
    parts["cd"] = (center_distance(out["tokens"], out["ptr"], teacher_memory)
                   if teacher_memory is not None else jnp.zeros(()))
    total = sum(w[k] * parts[k] for k in ("class", "l1", "giou", "obj")) + w["cd"] * parts["cd"]
    return total, parts
