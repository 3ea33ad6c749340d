"""PSNR and SSIM restricted to the missing pixels, and kernel alignment measures.

Images are (H, W) or (H, W, C) floats in [0, 1] (data range 1); `missing` is a boolean (H, W)
mask, True where the pixel was NOT observed during fitting.

PSNR is `skimage.metrics.peak_signal_noise_ratio` on the selected pixels. SSIM (Wang et al.
2004) is `skimage.metrics.structural_similarity(gaussian_weights=True, sigma=1.5,
use_sample_covariance=False, data_range=1, full=True)` (Gaussian window, K1 = 0.01,
K2 = 0.03, population (co)variances); `ssim_map` returns its per-pixel map (averaged over
channels) and `ssim_missing` the map's mean over the missing pixels.

Alignment (Cristianini et al. 2002) A(K1, K2) = ⟨K1, K2⟩_F / (‖K1‖_F ‖K2‖_F); with a target
y, A(K, yyᵀ) = yᵀKy / (‖K‖_F ‖y‖²). The centred version (CKA, Cortes et al. 2012) first
applies H = I − 11ᵀ/n on both sides.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np


def _check_pair(pred, target, missing):
    pred, target, missing = np.asarray(pred, np.float64), np.asarray(target, np.float64), np.asarray(missing, bool)
    if pred.shape != target.shape:
        raise ValueError(f"prediction shape {pred.shape} differs from target shape {target.shape}")
    if missing.shape != target.shape[:2]:
        raise ValueError(f"missing mask shape {missing.shape} must equal the image's (H, W) = {target.shape[:2]}")
    if not missing.any():
        raise ValueError("the mask has no missing pixel: metrics on missing pixels are undefined")
    return pred, target, missing


def psnr(pred, target, region=None) -> float:
    """10 log10(1 / MSE) over `region` (boolean (H, W); all pixels when None); inf when equal."""
    pred, target = np.asarray(pred, np.float64), np.asarray(target, np.float64)
    if region is not None:
        region = np.asarray(region, bool)
        pred, target = pred[region], target[region]
    if np.array_equal(pred, target):
        return float("inf")
    from skimage import metrics as skm  # noqa: PLC0415 (the `images` extra)
    return float(skm.peak_signal_noise_ratio(target, pred, data_range=1.0))


def psnr_missing(pred, target, missing) -> float:
    """PSNR over the missing pixels only."""
    pred, target, missing = _check_pair(pred, target, missing)
    return psnr(pred, target, missing)


def ssim_map(pred, target, sigma: float = 1.5) -> np.ndarray:
    """(H, W) SSIM map, channels averaged (data range 1)."""
    pred, target = np.asarray(pred, np.float64), np.asarray(target, np.float64)
    if pred.ndim == 2:
        pred, target = pred[..., None], target[..., None]
    from skimage import metrics as skm  # noqa: PLC0415 (the `images` extra)
    maps = [skm.structural_similarity(pred[..., c], target[..., c], gaussian_weights=True,
                                      sigma=sigma, use_sample_covariance=False, data_range=1.0,
                                      full=True)[1] for c in range(pred.shape[-1])]
    return np.mean(maps, axis=0)


def ssim_missing(pred, target, missing) -> float:
    """Mean SSIM over the missing pixels."""
    pred, target, missing = _check_pair(pred, target, missing)
    return float(np.mean(ssim_map(pred, target)[missing]))


def alignment(k1, k2, centered: bool = False):
    """⟨K1, K2⟩_F / (‖K1‖_F ‖K2‖_F), optionally after centring both kernels (CKA)."""
    if k1.shape != k2.shape or k1.ndim != 2:
        raise ValueError(f"alignment needs two kernels of equal 2-D shape, got {k1.shape}, {k2.shape}")
    if centered:
        k1, k2 = center(k1), center(k2)
    num = jnp.sum(k1 * k2)
    return num / (jnp.linalg.norm(k1) * jnp.linalg.norm(k2) + 1e-30)


def center(k):
    """H K H with H = I − 11ᵀ/n."""
    return k - k.mean(0, keepdims=True) - k.mean(1, keepdims=True) + k.mean()


def target_alignment(k, y, centered: bool = False):
    """A(K, yyᵀ) for targets y of shape (n,) or (n, C) (then yyᵀ sums over channels)."""
    y = y.reshape(y.shape[0], -1)
    return alignment(k, y @ y.T, centered)
