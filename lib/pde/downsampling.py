"""Spatial downsampling from a fine to a coarse periodic grid, by an integer factor.

Two operators, over the trailing `ndim` axes of a field:
- `spectral_truncation` (the default in datasets): keep the Fourier modes the coarse grid
  can hold (`|j| < m/2` for m coarse points; the coarse Nyquist mode is dropped, which
  keeps the result real and symmetric) and sample at the coarse grid points
  `x = i * L / m`, which coincide with every factor-th fine point. Exact for band-limited
  fields and consistent with the spectral solvers and with spectral derivatives on the
  coarse grid.
- `cell_average`: the mean over each block of `factor^ndim` fine points, i.e. the finite-
  volume average over coarse cells. Note the offset: the block starting at fine point
  `i * factor` is centred at `(i * factor + (factor − 1)/2) * dx_fine`, half a coarse cell
  minus half a fine cell from the coarse grid point of `spectral_truncation`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.pde import checks


def _check(field: jax.Array, factor: int, ndim: int) -> int:
    if ndim not in (1, 2):
        raise ValueError(f"ndim = {ndim!r} must be 1 or 2")
    sizes = field.shape[-ndim:]
    if len(set(sizes)) != 1:
        raise ValueError(f"spatial axes {sizes} must be of equal size")
    checks.check_divisible(sizes[0], factor)
    return sizes[0] // factor


def spectral_truncation(field: jax.Array, factor: int, ndim: int = 2) -> jax.Array:
    """Fourier truncation of `field` of shape `(..., n[, n])` to `(..., m[, m])`, `m = n // factor`."""
    m = _check(field, factor, ndim)
    n = field.shape[-1]
    if factor == 1:
        return field
    half = m // 2
    lead = field.shape[:-ndim]
    if ndim == 1:
        coarse_hat = jnp.zeros((*lead, half + 1), jnp.result_type(field.dtype, jnp.complex64))
        coarse_hat = coarse_hat.at[..., :half].set(jnp.fft.rfft(field)[..., :half])
        coarse = jnp.fft.irfft(coarse_hat, n=m)
    else:
        spectrum = jnp.fft.rfft2(field)
        coarse_hat = jnp.zeros((*lead, m, half + 1), spectrum.dtype)
        coarse_hat = coarse_hat.at[..., :half, :half].set(spectrum[..., :half, :half])
        coarse_hat = coarse_hat.at[..., m - half + 1:, :half].set(spectrum[..., n - half + 1:, :half])
        coarse = jnp.fft.irfft2(coarse_hat, s=(m, m))
    return (coarse / factor**ndim).astype(field.dtype)


def cell_average(field: jax.Array, factor: int, ndim: int = 2) -> jax.Array:
    """Block means of `field` of shape `(..., n[, n])` over `factor^ndim` points; `(..., m[, m])`."""
    m = _check(field, factor, ndim)
    lead = field.shape[:-ndim]
    blocks = field.reshape(*lead, *[s for _ in range(ndim) for s in (m, factor)])
    return blocks.mean(axis=tuple(range(len(lead) + 1, len(lead) + 2 * ndim, 2)))


DOWNSAMPLERS = {"spectral": spectral_truncation, "cell_average": cell_average}


def downsample(field: jax.Array, factor: int, method: str = "spectral", ndim: int = 2) -> jax.Array:
    """Dispatch to `spectral_truncation` or `cell_average` by name (ValueError otherwise)."""
    if method not in DOWNSAMPLERS:
        raise ValueError(f"unknown downsampling method {method!r}; allowed: {sorted(DOWNSAMPLERS)}")
    return DOWNSAMPLERS[method](field, factor, ndim)
