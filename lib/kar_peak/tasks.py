"""Data for the KAR/PEAK experiments: scikit-image pictures, missing-pixel masks, coordinate
grids, and a 1-D regression whose optimal kernel is known in closed form.

Images: `load_image(name, size, colour, texture_crop)` -> (size, size, C) float32 in [0, 1]
(C = 1 grey, 3 colour). Textures (brick, grass, gravel) are first cropped to their central
`texture_crop` fraction so that their pattern survives the down-sampling.

Masks: boolean (H, W), True = missing (not observed during fitting):
  random     each pixel missing with probability `fraction` (paper: 50 %);
  patch      square `patch`×`patch` blocks on the block grid, `fraction` of the blocks missing;
  textural   the strokes of `skimage.data.text()` (its central part, resized, thresholded at
             the dark letters and dilated once) — a text-shaped, structured mask.

1-D regression (`gp_regression`): f* ~ GP(0, k) with the band-limited stationary kernel
k(x, x') = Σ_{j=0..J} s_j cos(π j (x − x')), s_j ∝ exp(−(j − j0)² / (2 w²)), observed at n
random points with noise σ. The optimal kernel (paper Sec. 3, pointwise expected squared
error) is the posterior second moment
    K*(x, x') = E[f*(x) f*(x') | D] = μ(x) μ(x') + Σ(x, x'),
    μ = k(·, X)(K + σ²I)⁻¹ y,   Σ = k(·, ·) − k(·, X)(K + σ²I)⁻¹ k(X, ·).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import ndimage

GREY_IMAGES = ("camera", "brick", "grass", "gravel", "moon", "coins")
COLOUR_IMAGES = ("astronaut", "coffee", "chelsea", "rocket")
IMAGES = GREY_IMAGES + COLOUR_IMAGES
TEXTURES = ("brick", "grass", "gravel")
MASKS = ("random", "patch", "textural")
# seed of the stream that picks the grid points an image run measures its NTK on
NTK_POINTS_STREAM = 12345


def check_image(img) -> np.ndarray:
    """An (H, W) or (H, W, C) image as (H, W, C) float32; ValueError for any other rank."""
    img = np.asarray(img, np.float32)
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3 or img.shape[-1] not in (1, 3):
        raise ValueError(f"an image must be (H, W) or (H, W, C) with C in (1, 3); got shape {img.shape}")
    return img


def _center_crop(img: np.ndarray, fraction: float) -> np.ndarray:
    h, w = img.shape[:2]
    s = int(round(min(h, w) * fraction))
    top, left = (h - s) // 2, (w - s) // 2
    return img[top:top + s, left:left + s]


def load_image(name: str, size: int, colour: bool = False, texture_crop: float = 1.0) -> np.ndarray:
    """(size, size, C) float32 in [0, 1] from `skimage.data` (see module docstring)."""
    from skimage import color, data, transform  # optional: the `images` extra
    if name not in IMAGES:
        raise ValueError(f"unknown image {name!r}; allowed: {IMAGES}")
    if colour and name not in COLOUR_IMAGES:
        raise ValueError(f"image {name!r} is grey; colour images are {COLOUR_IMAGES}")
    img = getattr(data, name)().astype(np.float64) / 255.0
    if img.ndim == 3 and not colour:
        img = color.rgb2gray(img[..., :3])
    img = _center_crop(img, texture_crop if name in TEXTURES else 1.0)
    out = transform.resize(img, (size, size), anti_aliasing=True, order=1)
    return check_image(np.clip(out, 0.0, 1.0))


def make_mask(kind: str, size: int, *, fraction: float = 0.5, patch: int = 8, seed: int = 0) -> np.ndarray:
    """(size, size) boolean mask, True = missing (see module docstring)."""
    rng = np.random.default_rng(seed)
    if kind == "random":
        mask = rng.random((size, size)) < fraction
    elif kind == "patch":
        if size % patch:
            raise ValueError(f"patch size {patch} must divide the image size {size}")
        cells = (size // patch) ** 2
        chosen = rng.permutation(cells)[: int(round(fraction * cells))]
        grid = np.zeros(cells, bool)
        grid[chosen] = True
        mask = np.kron(grid.reshape(size // patch, size // patch), np.ones((patch, patch), bool)).astype(bool)
    elif kind == "textural":
        from skimage import data, transform  # optional: the `images` extra
        text = data.text().astype(np.float64) / 255.0
        text = text[20:150, 10:440]                                   # the lines of letters
        small = transform.resize(text, (size, size), anti_aliasing=True, order=1)
        mask = ndimage.binary_dilation(small < 0.45)
    else:
        raise ValueError(f"unknown mask kind {kind!r}; allowed: {MASKS}")
    check_mask(mask, (size, size))
    return mask


def check_mask(missing, shape) -> np.ndarray:
    """ValueError unless `missing` is a boolean (H, W) mask with an observed and a missing pixel."""
    missing = np.asarray(missing)
    if missing.shape != tuple(shape):
        raise ValueError(f"mask shape {missing.shape} must equal the image's (H, W) = {tuple(shape)}")
    if missing.dtype != bool:
        raise ValueError(f"mask must be boolean (True = missing), got dtype {missing.dtype}")
    if missing.all():
        raise ValueError("mask has no observed pixel: nothing to fit")
    if not missing.any():
        raise ValueError("mask has no missing pixel: nothing to inpaint or evaluate")
    return missing


def grid_coords(h: int, w: int) -> np.ndarray:
    """(h·w, 2) float32 (row, column) coordinates in [-1, 1], row-major."""
    r, c = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, w), indexing="ij")
    return np.stack([r.ravel(), c.ravel()], -1).astype(np.float32)


# ----------------------------------------------------------------------------- 1-D regression


class Regression1D(NamedTuple):
    x_train: np.ndarray     # (n, 1), shared by the draws
    y_train: np.ndarray     # (n, V) noisy observations of V independent draws of f*
    x_test: np.ndarray      # (m, 1) uniform grid on [-1, 1]
    f_test: np.ndarray      # (m, V) the true functions on the grid
    post_mean: np.ndarray   # (m, V) posterior means μ (Bayes-optimal predictions)
    k_opt: np.ndarray       # (V, m, m) optimal kernels K* = μμᵀ + Σ on the grid
    k_prior: np.ndarray     # (m, m) prior kernel on the grid


def band_kernel(x1, x2, spectrum: np.ndarray) -> np.ndarray:
    """k(x, x') = Σ_j s_j cos(π j (x − x')) for (n, 1), (m, 1) inputs."""
    diff = x1[:, 0][:, None] - x2[:, 0][None, :]
    j = np.arange(len(spectrum))
    return np.tensordot(np.cos(np.pi * diff[..., None] * j), spectrum, axes=([-1], [0]))


def band_spectrum(max_freq: int, centre: float, width: float) -> np.ndarray:
    """s_j ∝ exp(−(j − centre)² / (2 width²)), j = 0..max_freq, normalised to sum 1."""
    s = np.exp(-0.5 * ((np.arange(max_freq + 1) - centre) / width) ** 2)
    return s / s.sum()


def gp_regression(*, n_train: int, n_test: int, max_freq: int, centre: float, width: float,
                  noise: float, seed: int, num_draws: int = 1) -> Regression1D:
    """Draw `num_draws` f* from the band-limited GP, observe them at the same `n_train` random
    points; closed-form posterior means and optimal kernels on an `n_test` grid."""
    if n_train < 1 or n_test < 2 or num_draws < 1:
        raise ValueError(f"need n_train >= 1, n_test >= 2, num_draws >= 1; got {n_train}, {n_test}, {num_draws}")
    rng = np.random.default_rng(seed)
    s = band_spectrum(max_freq, centre, width)
    j = np.arange(max_freq + 1)
    a = rng.standard_normal((max_freq + 1, num_draws))
    b = rng.standard_normal((max_freq + 1, num_draws))

    def f_star(x):                                               # (n, 1) -> (n, V)
        arg = np.pi * x[:, :1] * j
        return np.cos(arg) @ (np.sqrt(s)[:, None] * a) + np.sin(arg) @ (np.sqrt(s)[:, None] * b)

    x_train = np.sort(rng.uniform(-1, 1, (n_train, 1)), axis=0)
    y_train = f_star(x_train) + noise * rng.standard_normal((n_train, num_draws))
    x_test = np.linspace(-1, 1, n_test)[:, None]
    k_xx = band_kernel(x_train, x_train, s) + (noise ** 2 + 1e-8) * np.eye(n_train)
    k_tx = band_kernel(x_test, x_train, s)
    k_tt = band_kernel(x_test, x_test, s)
    mean = k_tx @ np.linalg.solve(k_xx, y_train)                 # (m, V)
    cov = k_tt - k_tx @ np.linalg.solve(k_xx, k_tx.T)            # (m, m), the same for all draws
    k_opt = np.einsum("iv,jv->vij", mean, mean) + cov[None]
    f32 = lambda a_: np.asarray(a_, np.float32)
    return Regression1D(f32(x_train), f32(y_train), f32(x_test), f32(f_star(x_test)), f32(mean),
                        f32(k_opt), f32(k_tt))
