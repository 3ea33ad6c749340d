"""Is a Kolmogorov-flow sample on the statistically steady attractor? Energy spectra over time.

`energy_spectrum(omega, length)`: vorticity `(..., n, n)` -> shell-summed kinetic energy
`E(k)` for integer shells k = 0 … n/2 - 1 (`(..., n/2)`), E = ½|û|² summed over the shell,
normalised so that `sum(E) = mean(½|u|²)`. `stationarity(spectra)`: the relative L1
distance of the (IC- and running-time-averaged) spectrum from its late-time mean; a
warm-up is long enough once this stays under a tolerance (`settled_time`).
"""
from __future__ import annotations

import numpy as np

from lib.pde import spectral


def energy_spectrum(omega: np.ndarray, length: float) -> np.ndarray:
    n = omega.shape[-1]
    kx, ky = spectral.wavenumbers_2d(n, length)  # rfft2 layout, (n, n//2 + 1)
    k2 = kx**2 + ky**2
    w_hat = np.fft.rfft2(omega) / n**2
    energy = 0.5 * np.abs(w_hat) ** 2 / np.where(k2 > 0, k2, 1.0)  # |û|² = |ω̂|²/k²
    weight = np.full(k2.shape, 2.0)  # the rfft half-plane counts the other half once more
    weight[:, 0] = weight[:, -1] = 1.0  # except the self-conjugate columns (n even)
    shell = np.rint(np.sqrt(k2) * length / (2 * np.pi)).astype(int)
    e = energy * weight
    out = np.zeros(omega.shape[:-2] + (n // 2,))
    for s in range(n // 2):
        out[..., s] = np.sum(np.where(shell == s, e, 0.0), axis=(-2, -1))
    return out


def stationarity(spectra: np.ndarray, window: int = 3, tail: float = 0.5) -> np.ndarray:
    """`(T, ..., K)` spectra -> `(T,)`: the relative L1 distance of the IC-averaged spectrum,
    averaged over the last `window` records up to each time, from its mean over the last
    `tail` of the records (the statistically steady reference)."""
    mean = spectra.reshape(spectra.shape[0], -1, spectra.shape[-1]).mean(axis=1)  # (T, K)
    ref = mean[int(len(mean) * (1 - tail)):].mean(axis=0)
    running = np.asarray([mean[max(0, i - window + 1):i + 1].mean(axis=0) for i in range(len(mean))])
    return np.abs(running - ref).sum(axis=1) / ref.sum()


def settled_time(times: np.ndarray, distance: np.ndarray, tol: float) -> float | None:
    """The first time after which `distance` stays <= tol (None if it does not before the
    last half, whose mean is the reference)."""
    above = np.nonzero(distance > tol)[0]
    if len(above) == 0:
        return float(times[0])
    last = above[-1] + 1
    return float(times[last]) if last < len(times) // 2 else None
