"""Physics Block right-hand sides on the coarse grid (notes §1.1, §1.3).

Each function takes the state `u` and the derivatives `d` that the learnable filters took
of the *corrected* state ũ = u + Corr(u) (2-D: `Derivatives2D` or `GradLap2D`; the
right-hand sides read `x`, `y` and the Laplacian `lap`). Following P2C2Net's `RCNN.rk` (notes §1.1), only
derivatives use ũ; advecting velocities and reaction terms use the uncorrected u. Fields
are channels-last, 2-D `(..., H, W, C)` with axis H = y and axis W = x, grid points at
`(x, y) = (j, i) h` as in `lib.pde.spectral`. Coefficient names match the solvers in `lib/pde`.

The Poisson Block (Navier–Stokes only) is spectral: `rfft2`, with the first-derivative
symbols `i k` zeroed at the Nyquist wavenumbers and the Laplacian symbol taken as
`−|k|²` of those same k, so that divergence ∘ gradient is exactly that Laplacian and the
pressure projection leaves an exactly (spectrally) divergence-free field. The right-hand
side projects with `leray_projection`, which does the divergence, Poisson solve and
gradient in Fourier space between one `rfft2` and one `irfft2` of the two velocity
channels (the composition `spectral_gradient ∘ solve_poisson ∘ spectral_divergence`
takes three of each; equal to float rounding).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet.filters import Derivatives1D, Derivatives2D, GradLap2D

Array = jax.Array


def burgers_rhs(u: Array, d: Derivatives2D | GradLap2D, viscosity: float = 0.005) -> Array:
    """2-D viscous Burgers: `∂t u = ν ∇²ũ − (u ∂x + v ∂y) ũ`.

    Args:
      u: velocity `(..., H, W, 2)`, channels (u, v).
      d: derivatives of ũ, each `(..., H, W, 2)`.
      viscosity: ν (0.005 in P2C2Net's data).
    Returns:
      `(..., H, W, 2)`.
    """
    return viscosity * d.lap - (u[..., 0:1] * d.x + u[..., 1:2] * d.y)


def gray_scott_rhs(
    u: Array,
    d: Derivatives2D | GradLap2D,
    diffusivity_u: float = 2e-5,
    diffusivity_v: float = 1e-5,
    feed: float = 0.04,
    kill: float = 0.06,
) -> Array:
    """Gray–Scott: `∂t a = D_a ∇²ã − a b² + F (1 − a)`, `∂t b = D_b ∇²b̃ + a b² − (F + κ) b`.

    Args:
      u: concentrations `(..., H, W, 2)`, channels (a, b) (lib/pde calls them u, v).
      d: derivatives of the corrected state; only `xx` and `yy` are used.
      diffusivity_u, diffusivity_v, feed, kill: D_a, D_b, F, κ (defaults: Pearson's, as in lib/pde).
    Returns:
      `(..., H, W, 2)`.
    """
    a, b = u[..., 0], u[..., 1]
    lap = d.lap
    reaction = a * b**2
    da = diffusivity_u * lap[..., 0] - reaction + feed * (1 - a)
    db = diffusivity_v * lap[..., 1] + reaction - (feed + kill) * b
    return jnp.stack([da, db], axis=-1)


def kdv_rhs(u: Array, d: Derivatives1D, nonlinear_coefficient: float = 6.0, dispersion: float = 1.0) -> Array:
    """KdV: `∂t u = −a u ∂x ũ − b ∂³x ũ` (`u_t + a u u_x + b u_xxx = 0`, as in `lib.pde.kdv`).

    Args:
      u: `(..., N, 1)`.
      d: derivatives of ũ, each `(..., N, 1)`.
      nonlinear_coefficient, dispersion: a and b.
    Returns:
      `(..., N, 1)`.
    """
    return -nonlinear_coefficient * u * d.x - dispersion * d.xxx


def _wavenumbers(ny: int, nx: int, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """`(ky (H, 1), kx (1, W//2+1))` of `rfft2` over (H, W) with the Nyquist wavenumbers set to 0."""
    ky = 2 * np.pi * np.fft.fftfreq(ny, spacing)
    kx = 2 * np.pi * np.fft.rfftfreq(nx, spacing)
    if ny % 2 == 0:
        ky[ny // 2] = 0.0
    if nx % 2 == 0:
        kx[nx // 2] = 0.0
    return ky[:, None], kx[None, :]


def spectral_gradient(p: Array, h: float) -> Array:
    """`∇p` of a scalar field `p (..., H, W)` -> `(..., H, W, 2)`, channels (∂x, ∂y)."""
    ny, nx = p.shape[-2:]
    ky, kx = _wavenumbers(ny, nx, h)
    p_hat = jnp.fft.rfft2(p)
    grads = jnp.stack([1j * kx * p_hat, 1j * ky * p_hat], axis=-1)
    return jnp.fft.irfft2(grads, s=(ny, nx), axes=(-3, -2)).astype(p.dtype)


def spectral_divergence(v: Array, h: float) -> Array:
    """`∇·v` of a vector field `v (..., H, W, 2)` (channels x, y) -> `(..., H, W)`."""
    ny, nx = v.shape[-3:-1]
    ky, kx = _wavenumbers(ny, nx, h)
    v_hat = jnp.fft.rfft2(v, axes=(-3, -2))
    div_hat = 1j * kx * v_hat[..., 0] + 1j * ky * v_hat[..., 1]
    return jnp.fft.irfft2(div_hat, s=(ny, nx)).astype(v.dtype)


def solve_poisson(source: Array, h: float) -> Array:
    """Zero-mean solution of `∇²p = source` on the periodic grid: `(..., H, W)` -> `(..., H, W)`.

    `p̂ = −ŝ / |k|²`, with the k = 0 mode (and modes whose Nyquist-free |k| is 0) set to 0.
    """
    ny, nx = source.shape[-2:]
    ky, kx = _wavenumbers(ny, nx, h)
    k2 = kx**2 + ky**2
    inv = np.where(k2 > 0, -1.0 / np.where(k2 > 0, k2, 1.0), 0.0)
    return jnp.fft.irfft2(jnp.fft.rfft2(source) * jnp.asarray(inv, source.dtype), s=(ny, nx)).astype(source.dtype)


def leray_projection(g: Array, h: float) -> Array:
    """`g − ∇p` with `∇²p = ∇·g` (zero-mean p), for `g (..., H, W, 2)` (channels x, y).

    `p̂ = −(i kx ĝx + i ky ĝy) / |k|²` (0 where |k| = 0), `∇p = irfft2(i k p̂)`: the same
    Nyquist-free symbols as `spectral_divergence`, `solve_poisson` and `spectral_gradient`,
    composed in Fourier space.
    """
    ny, nx = g.shape[-3:-1]
    ky, kx = _wavenumbers(ny, nx, h)
    k2 = kx**2 + ky**2
    inv = np.where(k2 > 0, -1.0 / np.where(k2 > 0, k2, 1.0), 0.0)
    g_hat = jnp.fft.rfft2(g, axes=(-3, -2))
    p_hat = (1j * kx * g_hat[..., 0] + 1j * ky * g_hat[..., 1]) * inv
    grad_hat = jnp.stack([1j * kx * p_hat, 1j * ky * p_hat], axis=-1)
    return g - jnp.fft.irfft2(grad_hat, s=(ny, nx), axes=(-3, -2)).astype(g.dtype)


def composed_projection(g: Array, h: float) -> Array:
    """`leray_projection` as three spectral steps (divergence, Poisson, gradient): the reference."""
    return g - spectral_gradient(solve_poisson(spectral_divergence(g, h), h), h)


PROJECTIONS = {"fused": leray_projection, "composed": composed_projection}


def kolmogorov_forcing(u: Array, h: float, wavenumber: float = 4.0, scale: float = 1.0, drag: float = 0.1) -> Array:
    """`f = scale · sin(k y) x̂ − drag · u` at grid rows `y_i = i h`; `u (..., H, W, 2)` -> same shape."""
    y = np.arange(u.shape[-3]) * h
    push = np.zeros((u.shape[-3], 1, 2))
    push[:, 0, 0] = scale * np.sin(wavenumber * y)
    return jnp.asarray(push, u.dtype) - drag * u


def navier_stokes_rhs(
    u: Array,
    d: Derivatives2D | GradLap2D,
    h: float,
    viscosity: float = 1e-3,
    drag: float = 0.1,
    forcing_wavenumber: float = 4.0,
    forcing_scale: float = 1.0,
    projection: str = "fused",
) -> Array:
    """Incompressible NS, velocity form: `∂t u = −(u·∇)ũ − ∇p + ν ∇²ũ + f`.

    Poisson Block (notes §1.3): `∇²p = ∇·g` with `g = −(u·∇)ũ + f`, i.e.
    `∇²p = −∇·((u·∇)ũ) + ∇·f`, solved spectrally; `g − ∇p` is the divergence-free part of g.
    The forcing is Kolmogorov's with linear drag, `f = A sin(k_f y) x̂ − α u`.

    Args:
      u: velocity `(..., H, W, 2)`, channels (u, v).
      d: derivatives of ũ, each `(..., H, W, 2)`.
      h: grid spacing.
      viscosity, drag, forcing_wavenumber, forcing_scale: ν, α, k_f, A.
      projection: "fused" (`leray_projection`) or "composed" (`composed_projection`, the
        reference); equal to float rounding.
    Returns:
      `(..., H, W, 2)`.
    """
    if projection not in PROJECTIONS:
        raise ValueError(f"unknown pressure projection {projection!r}; allowed: {sorted(PROJECTIONS)}")
    f = kolmogorov_forcing(u, h, forcing_wavenumber, forcing_scale, drag)
    g = f - (u[..., 0:1] * d.x + u[..., 1:2] * d.y)
    return PROJECTIONS[projection](g, h) + viscosity * d.lap
