"""2-D incompressible Navier–Stokes (Kolmogorov flow) in vorticity form, pseudo-spectral.

On the periodic square `[0, L)²` the vorticity `ω = ∂x v − ∂y u` obeys

    ∂t ω + u·∇ω = ν ∇²ω − α ω + (∇ × f)·ẑ,    f = A sin(k_f y) x̂,

which is the curl of the velocity form `∂t u + (u·∇)u = −∇p + ν∇²u − α u + f` that
MultiPDENet works in (notes §1.3 and §2.2: ν = 1e-3, α = 0.1, A = 1, k_f = 4, as in
jax-cfd's `kolmogorov_forcing.gin`). The velocity is recovered from the streamfunction ψ,
`∇²ψ = −ω`, `u = ∂y ψ`, `v = −∂x ψ`, so it is divergence-free by construction and no
pressure solve is needed.

Discretisation: Fourier pseudo-spectral, the advection term `u·∇ω` evaluated on the grid
and de-aliased by the 2/3 rule (the state itself is kept inside the 2/3 band, so the
scheme is a Galerkin truncation and advection conserves energy exactly up to time
error). Time stepping: ETDRK4 (`lib/pde/etdrk4.py`). It was chosen over jax-cfd's
Crank–Nicolson/RK4 IMEX because it is fourth-order for the whole equation (CN is
second-order in the stiff viscous and drag terms), it integrates the linear part
`L = −ν|k|² − α` exactly (so no diffusive stability limit, at any ν), and, `L` being
diagonal, the exponentials cost one multiply per mode; the same integrator serves KdV
and Gray–Scott. Per step: 4 nonlinear evaluations of 1 batched inverse FFT (4 fields)
and 1 forward FFT each.

States are vorticity fields of shape `(1, n, n)` (one channel, indexed `[c, y, x]`).
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lib.pde import checks
from lib.pde.etdrk4 import make_etdrk4_step
from lib.pde.spectral import dealias_mask_2d, grid_points_2d, wavenumbers_2d

FIELD_NAMES = ("vorticity",)
# ETDRK4 reduces to classical RK4 for the advection term, stable for |λ dt| <= 2√2 on the
# imaginary axis; the largest de-aliased advective eigenvalue is max|u|·√2·(2π/3)/dx, so
# dt·max|u|/dx <= 2√2 / (√2·2π/3) ≈ 0.95.
MAX_CFL = 0.9


def _inverse_laplacian(n: int, length: float) -> np.ndarray:
    """`1/|k|²` with the mean mode set to 0; shape `(n, n//2+1)`."""
    kx, ky = wavenumbers_2d(n, length)
    k2 = kx**2 + ky**2
    return np.where(k2 > 0, 1.0 / np.where(k2 > 0, k2, 1.0), 0.0)


def vorticity_to_velocity(omega: jax.Array, length: float = 2 * np.pi) -> jax.Array:
    """Velocity `(u, v)` of the zero-mean flow with vorticity `omega`.

    Args:
      omega: shape `(..., n, n)`.
      length: the side `L` of the periodic domain.
    Returns:
      shape `(..., 2, n, n)`: `u = ∂y ψ`, `v = −∂x ψ` with `∇²ψ = −ω`.
    """
    n = omega.shape[-1]
    kx, ky = wavenumbers_2d(n, length)
    psi_hat = jnp.fft.rfft2(omega) * _inverse_laplacian(n, length)
    velocity_hat = jnp.stack([1j * ky * psi_hat, -1j * kx * psi_hat], axis=-3)
    return jnp.fft.irfft2(velocity_hat, s=(n, n)).astype(omega.dtype)


def velocity_to_vorticity(velocity: jax.Array, length: float = 2 * np.pi) -> jax.Array:
    """Vorticity `ω = ∂x v − ∂y u` by spectral differentiation.

    Args:
      velocity: shape `(..., 2, n, n)`, channels `(u, v)`.
    Returns:
      shape `(..., n, n)`.
    """
    n = velocity.shape[-1]
    kx, ky = wavenumbers_2d(n, length)
    u_hat, v_hat = jnp.moveaxis(jnp.fft.rfft2(velocity), -3, 0)
    omega_hat = 1j * kx * v_hat - 1j * ky * u_hat
    return jnp.fft.irfft2(omega_hat, s=(n, n)).astype(velocity.dtype)


def forcing_vorticity(
    n: int, length: float = 2 * np.pi, wavenumber: int = 4, scale: float = 1.0
) -> np.ndarray:
    """Curl of the Kolmogorov forcing `A sin(k_f y) x̂`: `−A k_f cos(k_f y)`, shape `(n, n)`."""
    _, y = grid_points_2d(n, length)
    return -scale * wavenumber * np.cos(wavenumber * y)


def _advection_fn(n: int, length: float) -> Callable[[jax.Array], jax.Array]:
    """`omega_hat -> FFT(u·∇ω)`, de-aliased; spectra of shape `(..., n, n//2+1)`."""
    kx, ky = wavenumbers_2d(n, length)
    inv_lap = _inverse_laplacian(n, length)
    mask = dealias_mask_2d(n)

    def advection_hat(omega_hat: jax.Array) -> jax.Array:
        psi_hat = omega_hat * inv_lap
        parts = jnp.stack(
            [1j * ky * psi_hat, -1j * kx * psi_hat, 1j * kx * omega_hat, 1j * ky * omega_hat]
        )
        u, v, omega_x, omega_y = jnp.fft.irfft2(parts, s=(n, n))
        return mask * jnp.fft.rfft2(u * omega_x + v * omega_y)

    return advection_hat


def advection(omega: jax.Array, length: float = 2 * np.pi) -> jax.Array:
    """The de-aliased advection term `u·∇ω` on the grid; `omega` of shape `(..., n, n)`."""
    n = omega.shape[-1]
    omega_hat = jnp.fft.rfft2(omega) * dealias_mask_2d(n)
    return jnp.fft.irfft2(_advection_fn(n, length)(omega_hat), s=(n, n)).astype(omega.dtype)


def make_step(
    n: int,
    dt: float,
    length: float = 2 * np.pi,
    viscosity: float = 1e-3,
    drag: float = 0.1,
    forcing_wavenumber: int = 4,
    forcing_scale: float = 1.0,
    max_velocity: float = 7.0,
) -> Callable[[jax.Array], jax.Array]:
    """Return `step(omega) -> omega_next`: one ETDRK4 step of forced, damped 2-D Navier–Stokes.

    Args:
      n: grid points per side (even).
      dt: time step; must satisfy the CFL limit `dt <= MAX_CFL * (length/n) / max_velocity`.
      length: side `L` of the periodic domain `[0, L)²` (2π or 4π in the paper).
      viscosity: ν >= 0 (Re = 1/ν on [0, 2π]² with unit forcing).
      drag: linear drag coefficient α >= 0 (the `−0.1 u` of the LI/TSM data).
      forcing_wavenumber, forcing_scale: `f = scale · sin(k_f y) x̂`; scale 0 turns it off.
      max_velocity: the velocity bound used for the CFL check (7 for the paper's data).

    Returns:
      `step` mapping vorticity of shape `(1, n, n)` (float32 or float64) to the same; the
      output is band-limited to the 2/3 de-aliasing band. Pure; `vmap`/`jit`/`scan`-able.
    """
    checks.check_grid(n)
    checks.check_positive("length", length)
    checks.check_nonnegative("viscosity", viscosity)
    checks.check_nonnegative("drag", drag)
    checks.check_cfl(dt, max_velocity, length / n, MAX_CFL)
    kx, ky = wavenumbers_2d(n, length)
    linear = -viscosity * (kx**2 + ky**2) - drag
    mask = dealias_mask_2d(n)
    forcing_hat = np.fft.rfft2(forcing_vorticity(n, length, forcing_wavenumber, forcing_scale))
    advection_hat = _advection_fn(n, length)

    def nonlinear(omega_hat: jax.Array) -> jax.Array:
        return jnp.asarray(forcing_hat, omega_hat.dtype) - advection_hat(omega_hat)

    spectral_step = make_etdrk4_step(linear, nonlinear, dt)

    def step(omega: jax.Array) -> jax.Array:
        omega_hat = spectral_step(jnp.fft.rfft2(omega) * mask)
        return jnp.fft.irfft2(omega_hat, s=(n, n)).astype(omega.dtype)

    return step


def random_initial_state(
    key: jax.Array,
    n: int,
    length: float = 2 * np.pi,
    peak_wavenumber: float = 4.0,
    max_velocity: float = 7.0,
    dtype: jnp.dtype = jnp.float32,
) -> jax.Array:
    """A random band-limited, divergence-free flow, returned as vorticity of shape `(1, n, n)`.

    White noise is filtered into a streamfunction whose velocity amplitude spectrum is
    `g(k) = (k/k_p)² exp(1 − (k/k_p)²)` (peak 1 at the physical wavenumber `k_p`, so the
    same eddy size on [0, 2π]² and [0, 4π]²), restricted to the 2/3 band, and scaled so
    that the largest speed `max |(u, v)|` equals `max_velocity` (in the spirit of jax-cfd's
    `filtered_velocity_field(max_velocity=7, peak_wavenumber=4)`).
    """
    checks.check_grid(n)
    checks.check_positive("peak_wavenumber", peak_wavenumber)
    checks.check_positive("max_velocity", max_velocity)
    kx, ky = wavenumbers_2d(n, length)
    k = np.sqrt(kx**2 + ky**2)
    ratio2 = (k / peak_wavenumber) ** 2
    amplitude = np.where(k > 0, ratio2 * np.exp(1 - ratio2) / np.where(k > 0, k, 1.0), 0.0)
    psi_hat = jnp.fft.rfft2(jax.random.normal(key, (n, n), dtype)) * (amplitude * dealias_mask_2d(n))
    omega = jnp.fft.irfft2((kx**2 + ky**2) * psi_hat, s=(n, n)).astype(dtype)
    speed = jnp.linalg.norm(vorticity_to_velocity(omega, length), axis=0)
    return (omega * (max_velocity / jnp.max(speed)))[None]
