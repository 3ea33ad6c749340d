"""Sample-quality metrics: sliced Wasserstein, MMD, Fréchet distance, k-NN precision/recall,
saturation. numpy in, floats out (evaluation only; nothing here is differentiated).

    sliced_wasserstein(x, y)        SW₂ over random directions (quantile matching)
    mmd_rbf(x, y)                   squared MMD, sum of Gaussian kernels (biased V-statistic)
    frechet_distance, knn_precision_recall   from lib/toolbox/sample_metrics.py
    saturation(images)              mean |2p − 1| of images in [0, 1] (grey-level analogue of
                                    the colour saturation of Sadat et al.; 1 = all pixels at 0/1)
    out_of_range(images)            fraction of pixels outside [0, 1] before clipping
"""
from __future__ import annotations

import numpy as np

from lib.toolbox.sample_metrics import frechet_distance, knn_precision_recall  # noqa: F401


def sliced_wasserstein(x: np.ndarray, y: np.ndarray, num_projections: int = 256,
                       seed: int = 0, num_quantiles: int = 1000) -> float:
    """SW₂(x, y) for point sets (n, D), (m, D): √(mean over directions of W₂² of the 1-D
    projections), each W₂² from `num_quantiles` matched quantiles (n ≠ m allowed)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"sliced_wasserstein needs (n, D) and (m, D) arrays, got {x.shape}, {y.shape}")
    rng = np.random.default_rng(seed)
    dirs = rng.standard_normal((x.shape[1], num_projections))
    dirs /= np.linalg.norm(dirs, axis=0, keepdims=True)
    q = (np.arange(num_quantiles) + 0.5) / num_quantiles

    def quantiles(z):   # empirical quantile function at q: (num_quantiles, num_projections)
        return np.sort(z, axis=0)[np.floor(q * len(z)).astype(int)]

    return float(np.sqrt(np.mean((quantiles(x @ dirs) - quantiles(y @ dirs)) ** 2)))


def mmd_rbf(x: np.ndarray, y: np.ndarray, bandwidths=(0.1, 0.3, 1.0, 3.0)) -> float:
    """Squared MMD with k(a, b) = Σ_h exp(−‖a − b‖²/(2h²)) (biased; 0 iff equal samples)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)

    def k(a, b):
        d2 = np.sum(a ** 2, 1)[:, None] + np.sum(b ** 2, 1)[None] - 2 * a @ b.T
        return sum(np.exp(-np.maximum(d2, 0) / (2 * h ** 2)) for h in bandwidths)

    return float(k(x, x).mean() + k(y, y).mean() - 2 * k(x, y).mean())


def saturation(images: np.ndarray) -> float:
    """Mean |2p − 1| over pixels of images clipped to [0, 1]."""
    return float(np.mean(np.abs(2 * np.clip(images, 0, 1) - 1)))


def out_of_range(images: np.ndarray) -> float:
    """Fraction of pixel values outside [0, 1]."""
    images = np.asarray(images)
    return float(np.mean((images < 0) | (images > 1)))
