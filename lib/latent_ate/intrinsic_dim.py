"""Intrinsic dimension of a point cloud: TwoNN and the Levina–Bickel MLE.

The paper's argument: nuisance rates depend on the intrinsic, not the ambient, dimension of
the latent features (its §4; the released code measures it with scikit-dimension's MLE).

  two_nn(x)      Facco et al. (2017): μ_i = r_2(i)/r_1(i) (second over first nearest-
                 neighbour distance) is Pareto(d) on a d-manifold, so the MLE is
                 d̂ = N / Σ_i log μ_i (the discard-free maximum-likelihood variant).
  mle(x, k)      Levina & Bickel (2005) with MacKay–Ghahramani's averaging of inverses:
                 m̂_k(i)⁻¹ = (1/(k−1)) Σ_{j<k} log(T_k(i)/T_j(i)), d̂ = 1 / mean_i m̂_k(i)⁻¹.

x (N, D) float; duplicated points (zero distances) are dropped first. Pure JAX, O(N²) memory
in row chunks.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def knn_distances(x, k: int, chunk: int = 1024) -> np.ndarray:
    """(N, k) sorted distances from each point to its k nearest other points."""
    x = jnp.asarray(x, jnp.float32)
    sq = (x ** 2).sum(1)

    @jax.jit
    def block(xb, sqb, start):
        d2 = sqb[:, None] + sq[None, :] - 2 * xb @ x.T
        rows = start + jnp.arange(xb.shape[0])
        d2 = d2.at[jnp.arange(xb.shape[0]), rows].set(jnp.inf)      # exclude self
        neg, _ = jax.lax.top_k(-d2, k)
        return jnp.sqrt(jnp.maximum(-neg, 0.0))

    out = [block(x[i:i + chunk], sq[i:i + chunk], i) for i in range(0, x.shape[0], chunk)]
    return np.asarray(jnp.concatenate(out))


def _dedupe(x) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if x.ndim != 2 or x.shape[0] < 3:
        raise ValueError(f"need a point cloud (N >= 3, D), got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("the point cloud has NaN/inf values")
    return np.unique(x, axis=0)


def two_nn(x) -> float:
    """TwoNN estimate of the intrinsic dimension of x (N, D)."""
    dist = knn_distances(_dedupe(x), 2).astype(np.float64)
    mu = dist[:, 1] / np.maximum(dist[:, 0], 1e-12)
    return float(mu.shape[0] / np.log(np.maximum(mu, 1.0 + 1e-12)).sum())


def mle(x, k: int = 10) -> float:
    """Levina–Bickel MLE with k neighbours (MacKay–Ghahramani averaging)."""
    if k < 3:
        raise ValueError(f"mle needs k >= 3 neighbours, got {k}")
    dist = np.maximum(knn_distances(_dedupe(x), k).astype(np.float64), 1e-12)
    inv = np.log(dist[:, -1:] / dist[:, :-1]).sum(1) / (k - 1)
    return float(1.0 / inv.mean())
