"""Geometric feature extraction (the fixed, hand-designed half of 3D-FLEG's extraction module).

The paper says only that the module "captures category-related geometric characteristics";
this is our design. For a cloud P (N, 3) and neighbourhood size k:

* local PCA: for each point i, the covariance C_i of its k nearest neighbours (itself
  included), eigenvalues λ1 ≥ λ2 ≥ λ3 ≥ 0 and the normal n_i (eigenvector of λ3);
* per-point descriptors (N, 5), each in [0, 1]:
    linearity  L = (λ1 - λ2) / λ1,   planarity  P = (λ2 - λ3) / λ1,
    sphericity S = λ3 / λ1,          curvature  K = 3 λ3 / (λ1 + λ2 + λ3),
    normal variation V = 1 - mean_j |n_i · n_j| over the neighbours j
  (the |·| makes V independent of the sign ambiguity of eigenvectors);
* a global descriptor (DIM = 5·bins + d2_bins + radial_bins + 3):
    the normalised histogram of each per-point descriptor (`bins` bins on [0, 1]),
    the D2 shape distribution (histogram of all pairwise distances / 2, `d2_bins` bins),
    the histogram of distances to the centroid / their maximum (`radial_bins` bins),
    the global PCA spectrum λ / Σλ of the whole cloud (sorted, 3 numbers).

Everything is computed from distances and |inner products| only, so the per-point
descriptors are invariant to rotations and translations and equivariant to point order;
the global descriptor is invariant to all three (tested). `check_cloud` rejects NaN/Inf
coordinates and clouds with fewer points than the neighbourhood (k + 1), with a message.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

NUM_LOCAL = 5
EPS = 1e-9


def descriptor_dim(bins: int, d2_bins: int, radial_bins: int) -> int:
    return NUM_LOCAL * bins + d2_bins + radial_bins + 3


def check_cloud(points, k: int) -> np.ndarray:
    """`points` as a float32 array (..., N, 3); ValueError for a bad shape, NaN/Inf, or
    N < k + 1 (a point's neighbourhood is itself plus k others)."""
    p = np.asarray(points, np.float32)
    if p.ndim < 2 or p.shape[-1] != 3:
        raise ValueError(f"a point cloud must have shape (..., N, 3); got {p.shape}")
    if not np.all(np.isfinite(p)):
        bad = int(np.sum(~np.isfinite(p).all(-1)))
        raise ValueError(f"point cloud has {bad} point(s) with NaN or infinite coordinates")
    if p.shape[-2] < k + 1:
        raise ValueError(f"point cloud has {p.shape[-2]} points, fewer than the neighbourhood "
                         f"size k + 1 = {k + 1}; use more points or a smaller k")
    return p


def knn(points: jax.Array, k: int) -> jax.Array:
    """(N, k+1) indices of each point's k+1 nearest points (itself first)."""
    d2 = jnp.sum((points[:, None, :] - points[None, :, :]) ** 2, -1)
    return jax.lax.top_k(-d2, k + 1)[1]


def local_descriptors(points: jax.Array, k: int) -> jax.Array:
    """(N, 3) -> (N, 5) [linearity, planarity, sphericity, curvature, normal variation]."""
    idx = knn(points, k)
    nb = points[idx]                                              # (N, k+1, 3)
    c = nb - nb.mean(1, keepdims=True)
    cov = jnp.einsum("nki,nkj->nij", c, c) / (k + 1)
    evals, evecs = jnp.linalg.eigh(cov)                           # ascending
    evals = jnp.maximum(evals, 0.0)
    l3, l2, l1 = evals[:, 0], evals[:, 1], evals[:, 2]
    normal = evecs[:, :, 0]                                       # (N, 3)
    lin = (l1 - l2) / (l1 + EPS)
    pla = (l2 - l3) / (l1 + EPS)
    sph = l3 / (l1 + EPS)
    curv = 3 * l3 / (l1 + l2 + l3 + EPS)
    var = 1 - jnp.mean(jnp.abs(jnp.einsum("ni,nki->nk", normal, normal[idx])), 1)
    return jnp.clip(jnp.stack([lin, pla, sph, curv, var], -1), 0.0, 1.0)


def _hist(x: jax.Array, bins: int) -> jax.Array:
    """Normalised histogram of values in [0, 1] (last bin closed)."""
    b = jnp.clip(jnp.floor(x * bins).astype(jnp.int32), 0, bins - 1)
    return jnp.sum(jax.nn.one_hot(b, bins), axis=tuple(range(x.ndim))) / x.size


def global_descriptor(points: jax.Array, local: jax.Array, bins: int, d2_bins: int,
                      radial_bins: int) -> jax.Array:
    """(N, 3), (N, 5) -> (DIM,) global descriptor (module docstring)."""
    hists = [_hist(local[:, j], bins) for j in range(NUM_LOCAL)]
    d = jnp.sqrt(jnp.sum((points[:, None, :] - points[None, :, :]) ** 2, -1) + EPS)
    n = points.shape[0]
    off = d[~np.eye(n, dtype=bool)]
    d2 = _hist(off / (2 * jnp.max(off)), d2_bins)
    c = points - points.mean(0)
    r = jnp.linalg.norm(c, axis=1)
    radial = _hist(r / (jnp.max(r) + EPS), radial_bins)
    spec = jnp.linalg.eigvalsh(c.T @ c / n)[::-1]
    spec = spec / (jnp.sum(spec) + EPS)
    return jnp.concatenate(hists + [d2, radial, spec])


@functools.partial(jax.jit, static_argnames=("k", "bins", "d2_bins", "radial_bins"))
def _describe_batch(points, *, k, bins, d2_bins, radial_bins):
    def one(p):
        loc = local_descriptors(p, k)
        return loc, global_descriptor(p, loc, bins, d2_bins, radial_bins)
    return jax.lax.map(one, points)


def describe(points, *, k: int, bins: int = 8, d2_bins: int = 16, radial_bins: int = 8,
             chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Batch (B, N, 3) -> (local (B, N, 5), global (B, DIM)) as numpy float32, checked first."""
    p = check_cloud(points, k)
    if p.ndim == 2:
        loc, glob = describe(p[None], k=k, bins=bins, d2_bins=d2_bins, radial_bins=radial_bins)
        return loc[0], glob[0]
    outs = [_describe_batch(jnp.asarray(p[i:i + chunk]), k=k, bins=bins, d2_bins=d2_bins,
                            radial_bins=radial_bins) for i in range(0, len(p), chunk)]
    return (np.concatenate([np.asarray(o[0]) for o in outs]),
            np.concatenate([np.asarray(o[1]) for o in outs]))
