"""PSNR and SSIM restricted to the missing pixels, and kernel alignment measures.

Images are (H, W) or (H, W, C) floats in [0, 1] (data range 1); `missing` is a boolean (H, W)
mask, True where the pixel was NOT observed during fitting.

SSIM (Wang et al. 2004) uses the Gaussian window (σ = 1.5, truncate 3.5, reflect borders),
K1 = 0.01, K2 = 0.03 and population (co)variances, the settings of
`skimage.metrics.structural_similarity(gaussian_weights=True, use_sample_covariance=False)`;
`ssim_map` returns the per-pixel map (averaged over channels) and `ssim_missing` its mean
over the missing pixels.

Alignment (Cristianini et al. 2002) A(K1, K2) = ⟨K1, K2⟩_F / (‖K1‖_F ‖K2‖_F); with a target
y, A(K, yyᵀ) = yᵀKy / (‖K‖_F ‖y‖²). The centred version (CKA, Cortes et al. 2012) first
applies H = I − 11ᵀ/n on both sides.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from scipy import ndimage


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
    """10 log10(1 / MSE) over `region` (boolean (H, W); all pixels when None)."""
    pred, target = np.asarray(pred, np.float64), np.asarray(target, np.float64)
    err = (pred - target) ** 2
    if region is not None:
        err = err[np.asarray(region, bool)]
    mse = float(np.mean(err))
    return float("inf") if mse == 0 else float(10.0 * np.log10(1.0 / mse))


def psnr_missing(pred, target, missing) -> float:
    """PSNR over the missing pixels only."""
    pred, target, missing = _check_pair(pred, target, missing)
    return psnr(pred, target, missing)


def ssim_map(pred, target, sigma: float = 1.5) -> np.ndarray:
    """(H, W) SSIM map, channels averaged (data range 1)."""
    pred, target = np.asarray(pred, np.float64), np.asarray(target, np.float64)
    if pred.ndim == 2:
        pred, target = pred[..., None], target[..., None]
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    maps = []
    for c in range(pred.shape[-1]):
        x, y = pred[..., c], target[..., c]
        filt = lambda a: ndimage.gaussian_filter(a, sigma, mode="reflect", truncate=3.5)
        ux, uy = filt(x), filt(y)
        vx, vy, vxy = filt(x * x) - ux * ux, filt(y * y) - uy * uy, filt(x * y) - ux * uy
        maps.append(((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux ** 2 + uy ** 2 + c1) * (vx + vy + c2)))
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
