"""2-D toy data sets: the paper's checkerboard, a Gaussian grid (a GM with known denoiser) and
two moons.

Samplers take a numpy Generator and return float32 (n, 2) arrays; `as_points` reshapes them
to the (n, G = 1, C = 2) layout of `mixture.GM`.
"""
from __future__ import annotations

import numpy as np

from lib.gmflow.mixture import GM

TOYS = ("checkerboard", "gaussian_grid", "moons")
CHECKER_SCALE = 4.0   # support [-4, 4]² (`datasets/checkerboard.py`, App. B.5)
GRID_SIDE, GRID_SPACING, GRID_STD = 5, 1.0, 0.1
MOONS_SCALE, MOONS_NOISE = 2.0, 0.05


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


def moons(rng: np.random.Generator, n: int) -> np.ndarray:
    """Two interleaving half circles (the usual "moons": upper arc (cos θ, sin θ), lower arc
    (1 − cos θ, ½ − sin θ), θ ~ U[0, π], each point's arc chosen with probability ½), plus
    isotropic noise of std MOONS_NOISE, centred at (½, ¼) and scaled by MOONS_SCALE, so the
    support is about [-3, 3] × [-1.6, 1.6]. float32 (n, 2)."""
    theta = np.pi * rng.random(n)
    lower = rng.random(n) < 0.5
    x = np.where(lower, 1.0 - np.cos(theta), np.cos(theta))
    y = np.where(lower, 0.5 - np.sin(theta), np.sin(theta))
    pts = np.stack([x - 0.5, y - 0.25], -1) + MOONS_NOISE * rng.standard_normal((n, 2))
    return (MOONS_SCALE * pts).astype(np.float32)


def moons_arc_distance(x: np.ndarray) -> np.ndarray:
    """Distance (n,) of points (n, 2) in `moons` coordinates to the nearer noise-free arc
    (in the same scaled units), for checking samples against the data's support."""
    p = np.asarray(x, np.float64) / MOONS_SCALE + np.array([0.5, 0.25])
    upper = np.abs(np.hypot(p[:, 0], p[:, 1]) - 1.0)
    upper = np.where(p[:, 1] >= 0, upper, np.hypot(np.abs(p[:, 0]) - 1.0, p[:, 1]))
    q = np.stack([1.0 - p[:, 0], 0.5 - p[:, 1]], -1)      # the lower arc mirrored onto the upper
    lower = np.abs(np.hypot(q[:, 0], q[:, 1]) - 1.0)
    lower = np.where(q[:, 1] >= 0, lower, np.hypot(np.abs(q[:, 0]) - 1.0, q[:, 1]))
    return MOONS_SCALE * np.minimum(upper, lower)


def sample_toy(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if name == "moons":
        return moons(rng, n)
    if name == "checkerboard":
        return checkerboard(rng, n)
    if name == "gaussian_grid":
        return gaussian_grid(rng, n)
    raise ValueError(f"unknown toy {name!r}; known: {TOYS}")


def as_points(x: np.ndarray) -> np.ndarray:
    """(n, 2) -> (n, 1, 2): one group of two channels."""
    return np.asarray(x)[:, None, :]
