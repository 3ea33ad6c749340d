"""2-D toy data sets: the paper's checkerboard and a Gaussian grid (a GM with known denoiser).

Samplers take a numpy Generator and return float32 (n, 2) arrays; `as_points` reshapes them
to the (n, G = 1, C = 2) layout of `mixture.GM`.
"""
from __future__ import annotations

import numpy as np

from lib.gmflow.mixture import GM

TOYS = ("checkerboard", "gaussian_grid")
CHECKER_SCALE = 4.0   # support [-4, 4]² (`datasets/checkerboard.py`, App. B.5)
GRID_SIDE, GRID_SPACING, GRID_STD = 5, 1.0, 0.1


def _white_squares() -> np.ndarray:
    """Lower-left corners (8, 2) of the white squares of a 4×4 board of unit squares on [-2, 2]²."""
    return np.array([(i - 2, j - 2) for i in range(4) for j in range(4) if (i + j) % 2 == 0],
                    dtype=np.float64)


def checkerboard(rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniform on the 8 white squares of a 4×4 board, scaled to [-4, 4]² (the paper's toy)."""
    corners = _white_squares()[rng.integers(0, 8, size=n)]
    return ((corners + rng.random((n, 2))) * (CHECKER_SCALE / 2)).astype(np.float32)


def in_white_square(x: np.ndarray) -> np.ndarray:
    """Whether each point (n, 2) lies in a white square of the checkerboard (bool (n,))."""
    cell = np.floor(np.asarray(x, np.float64) / (CHECKER_SCALE / 2))
    inside = np.all(np.abs(x) <= CHECKER_SCALE, axis=-1)
    return inside & ((cell[:, 0] + cell[:, 1]) % 2 == 0)


def gaussian_grid_gm() -> GM:
    """The 5×5 grid of isotropic Gaussians (std 0.1, spacing 1, centred) as a GM (K=25, G=1, C=2)."""
    c = (np.arange(GRID_SIDE) - (GRID_SIDE - 1) / 2) * GRID_SPACING
    means = np.stack(np.meshgrid(c, c, indexing="ij"), -1).reshape(-1, 1, 2)
    k = means.shape[0]
    return GM(np.asarray(means, np.float32), np.full((k, 1), -np.log(k), np.float32),
              np.float32(np.log(GRID_STD)))


def gaussian_grid(rng: np.random.Generator, n: int) -> np.ndarray:
    """Samples (n, 2) of `gaussian_grid_gm`."""
    gm = gaussian_grid_gm()
    centres = gm.means[rng.integers(0, gm.means.shape[0], size=n), 0]
    return (centres + GRID_STD * rng.standard_normal((n, 2))).astype(np.float32)


def sample_toy(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if name == "checkerboard":
        return checkerboard(rng, n)
    if name == "gaussian_grid":
        return gaussian_grid(rng, n)
    raise ValueError(f"unknown toy {name!r}; known: {TOYS}")


def as_points(x: np.ndarray) -> np.ndarray:
    """(n, 2) -> (n, 1, 2): one group of two channels."""
    return np.asarray(x)[:, None, :]
