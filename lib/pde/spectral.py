"""Fourier-space helpers for fields on periodic grids.

Array convention used throughout `lib/pde`: a 2-D field is indexed `[..., y, x]` (rows
are y, columns are x, as in P2C2Net's filters); grid point `(i, j)` sits at
`(x, y) = (j, i) * L / n` on the domain `[0, L)²`. Real FFTs (`rfft`, `rfft2`) run over the
trailing spatial axes, so the last (x) axis of a spectrum has `n // 2 + 1` entries.
"""
from __future__ import annotations

import numpy as np


def wavenumbers_1d(n: int, length: float) -> np.ndarray:
    """Angular wavenumbers of `jnp.fft.rfft` on `n` points over `[0, length)`; shape `(n//2+1,)`."""
    return 2 * np.pi / length * np.fft.rfftfreq(n, 1.0 / n)


def wavenumbers_2d(n: int, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Angular wavenumbers `(kx, ky)` of `jnp.fft.rfft2` on an `n × n` grid over `[0, length)²`.

    Returns `kx` of shape `(1, n//2+1)` and `ky` of shape `(n, 1)`; they broadcast to the
    spectrum's shape `(n, n//2+1)`.
    """
    kx = 2 * np.pi / length * np.fft.rfftfreq(n, 1.0 / n)
    ky = 2 * np.pi / length * np.fft.fftfreq(n, 1.0 / n)
    return kx[None, :], ky[:, None]


def dealias_mask_1d(n: int) -> np.ndarray:
    """Orszag's 2/3 rule for `rfft` on `n` points: keep modes `|j| < n/3`; shape `(n//2+1,)`."""
    j = np.fft.rfftfreq(n, 1.0 / n)
    return (3 * np.abs(j) < n).astype(np.float64)


def dealias_mask_2d(n: int) -> np.ndarray:
    """2/3 rule on an `n × n` grid (square "brick wall"): keep `|jx|, |jy| < n/3`; shape `(n, n//2+1)`."""
    jx = np.fft.rfftfreq(n, 1.0 / n)[None, :]
    jy = np.fft.fftfreq(n, 1.0 / n)[:, None]
    return ((3 * np.abs(jx) < n) & (3 * np.abs(jy) < n)).astype(np.float64)


def grid_points_1d(n: int, length: float) -> np.ndarray:
    """Grid coordinates `x_j = j * length / n`, shape `(n,)`."""
    return np.arange(n) * (length / n)


def grid_points_2d(n: int, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates `(x, y)`, each of shape `(n, n)` indexed `[y, x]`."""
    x = grid_points_1d(n, length)
    return np.meshgrid(x, x, indexing="xy")
