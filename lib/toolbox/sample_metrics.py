"""Metrics of generated samples against real ones, on feature vectors (N, F).

    frechet_distance(a, b)          ‖μa − μb‖² + tr(Σa + Σb − 2 (Σa Σb)^½)   (FID's formula)
    knn_precision_recall(r, f, k)   Kynkäänniemi et al. 2019 manifold precision / recall

Shared by GMFlow and SketchDNN (each applies it to its own features).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to feature sets a (N, F) and b (M, F); a
    singular product of covariances is regularised by 1e-6·I, the result clamped at 0."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or min(len(a), len(b)) < 2:
        raise ValueError(f"need two (N ≥ 2, F) feature sets, got {a.shape} and {b.shape}")
    mu1, mu2 = a.mean(0), b.mean(0)
    s1, s2 = np.atleast_2d(np.cov(a, rowvar=False)), np.atleast_2d(np.cov(b, rowvar=False))
    covmean = scipy.linalg.sqrtm(s1 @ s2)
    if not np.all(np.isfinite(covmean)):
        eps = 1e-6 * np.eye(len(s1))
        covmean = scipy.linalg.sqrtm((s1 + eps) @ (s2 + eps))
    covmean = np.real(covmean)
    return float(max(np.sum((mu1 - mu2) ** 2) + np.trace(s1 + s2 - 2 * covmean), 0.0))


def _pairwise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) Euclidean distances without an (N, M, F) intermediate."""
    d2 = np.sum(a ** 2, 1)[:, None] + np.sum(b ** 2, 1)[None] - 2 * a @ b.T
    return np.sqrt(np.maximum(d2, 0.0))


def _knn_radius(f: np.ndarray, k: int) -> np.ndarray:
    d = _pairwise(f, f)
    np.fill_diagonal(d, 0.0)
    return np.sort(d, 1)[:, k]          # column 0 is the point itself


def knn_precision_recall(real: np.ndarray, fake: np.ndarray, k: int = 3) -> tuple[float, float]:
    """(precision, recall): the share of fake points inside the union of the real points'
    k-NN balls, and of real points inside the union of the fake points' balls."""
    real, fake = np.asarray(real, np.float64), np.asarray(fake, np.float64)
    if min(len(real), len(fake)) <= k:
        raise ValueError(f"k-NN precision/recall needs more than k = {k} points per set")
    rr, rf = _knn_radius(real, k), _knn_radius(fake, k)
    d = _pairwise(fake, real)                                     # (fake, real)
    return float(np.mean(np.any(d <= rr[None], 1))), float(np.mean(np.any(d.T <= rf[None], 1)))
