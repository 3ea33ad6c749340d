"""Prompt augmentation, class scores and the training loss (our design, written down here).

Notation: t_c the unit MiniLM embedding of class c's prompt; for a cloud x, z(x) the point
embedding and e(x) the geometric embedding (`lib.fleg3d.model`), both in the text space.

(1) query embedding        u(x) = normalise(normalise(z(x)) + e(x))
(2) augmented prompt       t'_c = normalise(t_c + ē_c),   ē_c = mean of e over class c's
                           samples (the whole base training set for base classes, the K
                           shots for a new class)
(3) prototype              p_c  = normalise(mean of u over the same samples)
(4) score                  s_c(x) = u(x)·t'_c + γ u(x)·p_c
With e ≡ 0 (the FILP-3D-like variant) (1)-(4) reduce to text prompts plus prototypes.
(5) support calibration    s̃_c(x) = s_c(x) - mean_{i in support(c)} s_c(x_i)
The network is trained to put base-class clouds next to the base prompts, so raw scores
of a new class (whose prompt it never saw) are lower across the board; (5) measures each
class's score on its own support and compares classes relative to it (a per-class bias
that needs no extra data; `model.calibrate`, used for every prompt+prototype method).

Training on the base session (classes 0..B-1, class-balanced batches), the
*geometry-text alignment loss*:
    L = CE(u·t'ᵀ / τ, y) + λ · CE(normalise(e)·tᵀ / τ, y)
The first term is the point <-> augmented-prompt contrastive loss (ē_c from the batch's
class-c members, so prompts and queries move together); the second pulls each geometric
embedding towards its own class's prompt and away from the others' (the "modality
heterogeneity" fix: geometric vectors have to land in the text space where the prompt
they augment lives, not anywhere). λ = 0 is the `no_align` ablation.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import optax


NORM_EPS = 1e-8


def normalise(x, axis=-1, eps: float = NORM_EPS):
    """x / sqrt(|x|² + eps²) along `axis`: x/|x| to relative error eps²/(2|x|²), and 0 at x = 0.

    Smooth everywhere, so its gradient is finite at a zero vector too (I/eps there), unlike
    x / (|x| + eps) written with `jnp.linalg.norm`, whose derivative at 0 is 0/0 = NaN. The
    alignment term of `base_loss` normalises e ≡ 0 for the FILP-3D-like and w/o-embedding
    networks (there a constant, so no parameter gradient passes through it; the gradient of
    the loss with respect to the network output does).
    """
    return x * jax.lax.rsqrt(jnp.sum(x * x, axis=axis, keepdims=True) + eps * eps)


def query_embedding(z, e):
    """Eq. (1): (B, D), (B, D) -> (B, D) unit vectors."""
    return normalise(normalise(z) + e)


def class_means(x, labels, num_classes: int):
    """(C, D) mean of rows of x per label (zero rows for labels with no member)."""
    one = jax.nn.one_hot(labels, num_classes, dtype=x.dtype)
    return (one.T @ x) / jnp.maximum(one.sum(0), 1.0)[:, None]


def augmented_prompts(text, e_mean):
    """Eq. (2): (C, D), (C, D) -> (C, D)."""
    return normalise(text + e_mean)


def scores(u, prompts, protos, proto_weight: float):
    """Eq. (4): (B, D) queries against (C, D) prompts and prototypes -> (B, C)."""
    return u @ prompts.T + proto_weight * (u @ protos.T)


def base_loss(out, labels, text, *, temperature: float, align_weight: float):
    """The training loss above. out = model output {"z", "e"} (B, D); text (B_cls, D)."""
    num_classes = text.shape[0]
    u = query_embedding(out["z"], out["e"])
    prompts = augmented_prompts(text, class_means(out["e"], labels, num_classes))
    cls = optax.softmax_cross_entropy_with_integer_labels(u @ prompts.T / temperature, labels)
    align = optax.softmax_cross_entropy_with_integer_labels(
        normalise(out["e"]) @ text.T / temperature, labels)
    has_geo = (jnp.max(jnp.abs(out["e"])) > 0).astype(u.dtype)
    loss = cls.mean() + align_weight * has_geo * align.mean()
    acc = jnp.mean(jnp.argmax(u @ prompts.T, -1) == labels)
    return loss, {"loss": loss, "cls_loss": cls.mean(), "align_loss": align.mean() * has_geo,
                  "train_acc": acc}
