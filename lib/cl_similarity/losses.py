"""The unified contrastive-loss family of Lee, Lim, Lee & Sohn (ICML 2025) and the VRNS loss.

Two views of a batch of m instances give embeddings U = (u_1..u_m), V = (v_1..v_m), each
(m, d) and L2-normalised here. Which negatives count is switched by (c1, c2):
c1 = cross-view negatives (u_i, v_j), c2 = within-view negatives (u_i, u_j), (v_i, v_j), i ≠ j.

Def. 3.1 (InfoNCE-based, symmetric), φ convex increasing and positive, ψ increasing:
    L(U, V) = (1/m) Σ_i ψ( c1 Σ_{j≠i} φ((v_j − v_i)ᵀu_i) + c2 Σ_{j≠i} φ((u_j − v_i)ᵀu_i) ),
    L_sym   = ½ L(U, V) + ½ L(V, U).
  Evaluated in the log domain: a form gives log φ and ψ∘exp, and the inner sum is a
  logsumexp, so small temperatures do not overflow.
  InfoNCE/CLIP: φ = exp(x/t), ψ = log(1 + x), (1, 0).   SimCLR (NT-Xent): same, (1, 1).
  DCL: φ = exp(x/t), ψ = log x, (1, 1).                 DHEL: φ = exp(x/t), ψ = log x, (0, 1).

Def. 3.2 (independently additive), ϕ concave increasing, ψ convex:
    L = −(1/m) Σ_i ϕ(u_iᵀv_i) + c1/(m(m−1)) Σ_{i≠j} ψ(u_iᵀv_j)
        + c2/(2m(m−1)) Σ_{i≠j} [ψ(u_iᵀu_j) + ψ(v_iᵀv_j)].
  SigLIP (Ex. 5.4): ϕ(x) = −log(1 + e^{−tx+b}), ψ(x) = (m−1) log(1 + e^{tx−b}), (1, 0).
  Spectral CL (HaoChen et al.): ϕ(x) = 2x, ψ(x) = x², (1, 0).

VRNS (Def. 5.7): L_VRNS = 1/(m(m−1)) Σ_{i≠j in batch} (u_iᵀv_j + 1/(n−1))², n the data-set size;
the training objective is L + λ·L_VRNS.

Every loss is a sum over anchors i of a per-anchor term (`rows`), already divided by the
global normaliser. That is what makes it shardable: a device holding rows I of the batch
computes its anchors' terms against the negatives gathered from all devices
(`all_gather` over the "data" mesh axis) and a `psum` adds them (`sharded_loss_fn`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from lib.common.mesh import DATA

Array = jax.Array

NEGATIVES = {"cross": (1.0, 0.0), "within": (0.0, 1.0), "both": (1.0, 1.0)}
LOSSES = ("infonce", "simclr", "dcl", "dhel", "siglip", "spectral")


# ----------------------------------------------------------------------------- the two forms


class InfoNCEForm(NamedTuple):
    """Def. 3.1: `log_phi(x)` = log φ(x); `psi_exp(L)` = ψ(e^L) for L = log of the inner sum."""

    log_phi: Callable[[Array], Array]
    psi_exp: Callable[[Array], Array]
    c1: float
    c2: float


class AdditiveForm(NamedTuple):
    """Def. 3.2: `pos(x)` = ϕ(x); `neg(x, m)` = ψ(x) for batch size m (SigLIP's ψ has m − 1)."""

    pos: Callable[[Array], Array]
    neg: Callable[[Array, int], Array]
    c1: float
    c2: float


class Loss(NamedTuple):
    """A named loss: `form` is an `InfoNCEForm` or an `AdditiveForm`."""

    name: str
    form: InfoNCEForm | AdditiveForm


def _offdiag(ids: Array, m: int) -> Array:
    """(len(ids), m) bool mask, True where column j is not the anchor's own global index."""
    return ids[:, None] != jnp.arange(m)[None, :]


def info_rows(form: InfoNCEForm, u_a, v_a, u_all, v_all, ids) -> Array:
    """Per-anchor terms of ½L(U,V) + ½L(V,U) (Def. 3.1), divided by the global m.

    u_a, v_a: (k, d) the anchors (rows `ids` of the batch); u_all, v_all: (m, d) the whole
    batch; ids: (k,) int global row indices. Returns (k,).
    """
    m = u_all.shape[0]
    off = _offdiag(ids, m)

    def one_direction(a, b_own, b_all, a_all):
        pos = jnp.sum(a * b_own, axis=-1, keepdims=True)             # u_iᵀv_i
        cross = form.log_phi(a @ b_all.T - pos)                       # log φ((v_j − v_i)ᵀu_i)
        within = form.log_phi(a @ a_all.T - pos)                      # log φ((u_j − v_i)ᵀu_i)
        logits = jnp.concatenate([
            jnp.where(off & (form.c1 > 0), cross + jnp.log(jnp.maximum(form.c1, 1e-30)), -jnp.inf),
            jnp.where(off & (form.c2 > 0), within + jnp.log(jnp.maximum(form.c2, 1e-30)), -jnp.inf),
        ], axis=-1)
        return form.psi_exp(jax.nn.logsumexp(logits, axis=-1))

    return 0.5 * (one_direction(u_a, v_a, v_all, u_all)
                  + one_direction(v_a, u_a, u_all, v_all)) / m


def additive_rows(form: AdditiveForm, u_a, v_a, u_all, v_all, ids) -> Array:
    """Per-anchor terms of Def. 3.2, divided by the global normalisers. Shapes as `info_rows`."""
    m = u_all.shape[0]
    off = _offdiag(ids, m)
    pos = -form.pos(jnp.sum(u_a * v_a, axis=-1)) / m
    pair = m * (m - 1)
    cross = form.c1 * jnp.sum(jnp.where(off, form.neg(u_a @ v_all.T, m), 0.0), axis=-1) / pair
    within = form.c2 * jnp.sum(
        jnp.where(off, form.neg(u_a @ u_all.T, m) + form.neg(v_a @ v_all.T, m), 0.0),
        axis=-1) / (2 * pair)
    return pos + cross + within


def vrns_rows(u_a, v_all, ids, num_data: int) -> Array:
    """Per-anchor terms of L_VRNS (Def. 5.7): Σ_{j≠i} (u_iᵀv_j + 1/(n−1))² / (m(m−1)). (k,)."""
    m = v_all.shape[0]
    dev = u_a @ v_all.T + 1.0 / (num_data - 1)
    return jnp.sum(jnp.where(_offdiag(ids, m), dev**2, 0.0), axis=-1) / (m * (m - 1))


def loss_rows(loss: Loss, u_a, v_a, u_all, v_all, ids) -> Array:
    if isinstance(loss.form, InfoNCEForm):
        return info_rows(loss.form, u_a, v_a, u_all, v_all, ids)
    return additive_rows(loss.form, u_a, v_a, u_all, v_all, ids)


# ----------------------------------------------------------------------------- instances


def make_loss(name: str, *, temperature: float = 0.2, negatives: str | None = None,
              siglip_t: float = 10.0, siglip_b: float = 0.0) -> Loss:
    """One of `LOSSES` with its default negatives, or `negatives` in {cross, within, both}.

    `temperature` t is used by the Def. 3.1 losses (φ = exp(x/t)); SigLIP uses its own
    scale `siglip_t` and bias `siglip_b` in the paper's sign convention (ψ(x) has e^{tx−b}).
    """
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; known: {list(LOSSES)}")
    if negatives is not None and negatives not in NEGATIVES:
        raise ValueError(f"negatives must be one of {list(NEGATIVES)}, got {negatives!r}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    default = {"infonce": "cross", "simclr": "both", "dcl": "both", "dhel": "within",
               "siglip": "cross", "spectral": "cross"}[name]
    c1, c2 = NEGATIVES[negatives or default]
    t = float(temperature)
    if name in ("infonce", "simclr"):
        form = InfoNCEForm(lambda x: x / t, jax.nn.softplus, c1, c2)        # ψ(x) = log(1 + x)
    elif name in ("dcl", "dhel"):
        form = InfoNCEForm(lambda x: x / t, lambda L: L, c1, c2)            # ψ(x) = log x
    elif name == "siglip":
        st, sb = float(siglip_t), float(siglip_b)
        form = AdditiveForm(lambda x: -jax.nn.softplus(-st * x + sb),
                            lambda x, m: (m - 1) * jax.nn.softplus(st * x - sb), c1, c2)
    else:
        form = AdditiveForm(lambda x: 2.0 * x, lambda x, m: x**2, c1, c2)
    return Loss(name, form)


# ----------------------------------------------------------------------------- checks and API


def normalize(z: Array, eps: float = 1e-12) -> Array:
    """Rows of `z` (…, d) scaled to unit L2 norm; a zero row stays zero with a finite gradient.

    (z / ‖z‖ through `jnp.linalg.norm` has a NaN gradient at z = 0, which an all-black
    augmented view reaches at initialisation: zero image -> zero features -> zero projection.)
    """
    return z * jax.lax.rsqrt(jnp.maximum(jnp.sum(z * z, axis=-1, keepdims=True), eps * eps))


def check_views(u, v) -> None:
    """ValueError for views that are not (m, d) of the same shape with m ≥ 2, or hold NaN/Inf.

    Shapes are checked always (also under jit); the finiteness check needs concrete values
    and is skipped while tracing (in training the train loop's NaN guard stops a run).
    """
    for name, x in (("u", u), ("v", v)):
        if np.ndim(x) != 2:
            raise ValueError(f"view {name} must be a (batch, dim) array, got shape {np.shape(x)}")
    if np.shape(u) != np.shape(v):
        raise ValueError(f"the two views must have the same shape; got u {np.shape(u)} and "
                         f"v {np.shape(v)}")
    if np.shape(u)[0] < 2:
        raise ValueError(f"a contrastive loss needs a batch of at least 2 instances (one "
                         f"positive and at least one negative); got batch {np.shape(u)[0]}")
    for name, x in (("u", u), ("v", v)):
        if not isinstance(x, jax.core.Tracer):
            bad = int(np.size(x) - np.count_nonzero(np.isfinite(np.asarray(x))))
            if bad:
                raise ValueError(f"embeddings of view {name} contain {bad} NaN/Inf entries")


def _check_num_data(num_data: int | None, m: int) -> None:
    if num_data is None or num_data < m or num_data < 2:
        raise ValueError(f"VRNS needs the data-set size n ≥ batch size {m} (and ≥ 2); got "
                         f"{num_data}")


def contrastive_loss(loss: Loss, u, v, *, aux_weight: float = 0.0,
                     num_data: int | None = None) -> Array:
    """L(U, V) + λ·L_VRNS on one device. u, v: (m, d) raw embeddings (normalised here).

    `aux_weight` = λ; `num_data` = n, the data-set size in VRNS's target −1/(n−1) (needed
    when λ > 0). Returns a scalar.
    """
    check_views(u, v)
    m = u.shape[0]
    u, v = normalize(u), normalize(v)
    ids = jnp.arange(m)
    total = jnp.sum(loss_rows(loss, u, v, u, v, ids))
    if aux_weight:
        _check_num_data(num_data, m)
        total = total + aux_weight * jnp.sum(vrns_rows(u, v, ids, num_data))
    return total


def vrns_loss(u, v, num_data: int) -> Array:
    """L_VRNS alone (Def. 5.7) on one device; u, v: (m, d) raw embeddings."""
    check_views(u, v)
    _check_num_data(num_data, u.shape[0])
    u, v = normalize(u), normalize(v)
    return jnp.sum(vrns_rows(u, v, jnp.arange(u.shape[0]), num_data))


def sharded_loss_fn(loss: Loss, mesh, *, aux_weight: float = 0.0,
                    num_data: int | None = None) -> Callable[[Array, Array], Array]:
    """`contrastive_loss` with the batch split over the mesh's "data" axis (shard_map).

    Each device normalises its rows, gathers both views from all devices (the negatives),
    computes its anchors' terms and the `psum` over "data" adds them; the value equals the
    single-device loss. Usable inside a jitted train step; the global batch must split
    evenly over the "data" axis. Returns f(u, v) -> scalar (replicated).
    """
    shards = mesh.shape[DATA]

    def local(u, v):
        k = u.shape[0]
        u, v = normalize(u), normalize(v)
        u_all = jax.lax.all_gather(u, DATA, tiled=True)
        v_all = jax.lax.all_gather(v, DATA, tiled=True)
        ids = jax.lax.axis_index(DATA) * k + jnp.arange(k)
        part = jnp.sum(loss_rows(loss, u, v, u_all, v_all, ids))
        if aux_weight:
            part = part + aux_weight * jnp.sum(vrns_rows(u, v_all, ids, num_data))
        return jax.lax.psum(part, DATA)

    mapped = jax.shard_map(local, mesh=mesh, in_specs=(P(DATA), P(DATA)), out_specs=P())

    def f(u, v):
        check_views(u, v)
        m = u.shape[0]
        if m % shards:
            raise ValueError(f"batch {m} does not split over the {shards} devices of the "
                             f"'data' mesh axis")
        if aux_weight:
            _check_num_data(num_data, m)
        return mapped(u, v)

    return f


# ----------------------------------------------------------------------------- statistics


class SimilarityStats(NamedTuple):
    """Means and variances of positive, cross-view negative and within-view negative cosines."""

    pos_mean: Array
    neg_mean: Array
    neg_var: Array
    within_mean: Array
    within_var: Array


def similarity_stats(u, v) -> SimilarityStats:
    """Statistics of the m positive and m(m−1) cross-view negative pairs of (m, d) views."""
    u, v = normalize(u), normalize(v)
    m = u.shape[0]
    off = ~jnp.eye(m, dtype=bool)
    s = u @ v.T
    neg = jnp.where(off, s, 0.0)
    cnt = m * (m - 1)
    neg_mean = jnp.sum(neg) / cnt
    neg_var = jnp.sum(jnp.where(off, (s - neg_mean) ** 2, 0.0)) / cnt
    w = jnp.stack([u @ u.T, v @ v.T])                               # both views pooled
    w_mean = jnp.sum(jnp.where(off, w, 0.0)) / (2 * cnt)
    w_var = jnp.sum(jnp.where(off, (w - w_mean) ** 2, 0.0)) / (2 * cnt)
    return SimilarityStats(jnp.mean(jnp.diag(s)), neg_mean, neg_var, w_mean, w_var)
