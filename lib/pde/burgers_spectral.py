"""2-D viscous Burgers equation, Fourier pseudo-spectral in space, ETDRK4 in time.

The equation, domain and state are those of `lib/pde/burgers.py` (the FD4 + RK4 solver):

    ∂t u = ν ∇²u − (u ∂x + v ∂y) u,    ∂t v = ν ∇²v − (u ∂x + v ∂y) v

on the periodic unit square, states of shape `(2, n, n)`, channels `(u, v)`, indexed
`[c, y, x]`, grid points at `(j, i)/n`. Here the state is stepped as its `rfft2` spectrum
`(2, n, n//2+1)`: the diffusion `−ν|k|²` is the exactly integrated linear part of ETDRK4
(`lib/pde/etdrk4.py`), and the advection is evaluated on the grid from spectral
derivatives and de-aliased with the 2/3 rule. The state entering a step is projected onto
the 2/3 band, so the scheme is a Galerkin truncation (as `navier_stokes.py` is): products
of band-limited fields are then computed without aliasing into the kept modes.

Mean (k = 0 mode): the advective form conserves the mean of u and v only when the velocity
is curl-free (`∂y u = ∂x v`): `d/dt ∫u = −∫ v ∂y u`, which vanishes for gradient fields
(the Cole–Hopf class) but not for P2C2Net's random initial conditions, whose u and v are
independent. The truncated scheme keeps both properties exactly: a curl-free band-limited
state stays curl-free with its mean fixed to round-off.

Cost per step: 4 nonlinear evaluations of one batched inverse FFT (6 fields) and one
forward FFT (2 fields), plus the transforms into and out of the spectrum.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lib.pde import burgers, checks
from lib.pde.etdrk4 import make_etdrk4_step
from lib.pde.spectral import dealias_mask_2d, wavenumbers_2d

FIELD_NAMES = burgers.FIELD_NAMES
LENGTH = burgers.LENGTH
# Advective CFL number, dt · max_velocity / dx. Linearised about a uniform velocity (U, V)
# with |U|, |V| <= max_velocity, mode k advects with λ = −i(U kx + V ky). ETDRK4 treats the
# diffusion exactly and is classical RK4 on what is left, stable for |λ| dt <= 2√2 on the
# imaginary axis. The 2/3 rule keeps |kx|, |ky| < (2π/3)/dx, so |λ| < 2 · max_velocity ·
# (2π/3)/dx and dt <= 2√2 · 3 dx / (4π max_velocity) = (3√2/2π) dx / max_velocity. Both
# components count (max_velocity bounds each, as in `burgers.max_stable_dt`). Diffusion,
# which damps the band edge, is left out. Measured: about a uniform flow at ν = 0 the
# limit is sharp (stable at 1.05×, unstable at 1.1×: the band's corner mode is 2π·10 at
# n = 32, 6 % inside the bound). On 8 of the dataset's ICs (seed 1, ν = 0.005, float32,
# 2 time units) 0.9× stays bounded at n = 16, 32, 64; 3× blows up 1 IC at n = 16 and 32,
# 4× 2, 2 and 1 IC (n = 16, 32, 64): their max |u| is 0.7-1.7, below the bound 2.
MAX_CFL = 3 * np.sqrt(2) / (2 * np.pi)  # ≈ 0.675


def max_stable_dt(n: int, viscosity: float, max_velocity: float) -> float:
    """The advective step limit of ETDRK4 on an `n × n` grid: `MAX_CFL · (1/n) / max_velocity`.

    Args:
      n: grid points per side of [0, 1)².
      viscosity: ν >= 0; checked, but it does not enter the limit (diffusion is integrated
        exactly); the argument keeps the signature of `burgers.max_stable_dt`.
      max_velocity: bound on |u| and on |v| (P2C2Net's initial conditions stay below 2;
        viscous Burgers obeys a maximum principle, so the bound holds for all times).
    Returns:
      the step limit, a Python float.
    """
    checks.check_grid(n)
    checks.check_nonnegative("viscosity", viscosity)
    return checks.stable_time_step(max_velocity, MAX_CFL, LENGTH / n)


def _advection_fn(n: int) -> Callable[[jax.Array], jax.Array]:
    """`state_hat -> rfft2((u ∂x + v ∂y)(u, v))`, de-aliased; spectra `(..., 2, n, n//2+1)`."""
    kx, ky = wavenumbers_2d(n, LENGTH)
    mask = dealias_mask_2d(n)

    def advection_hat(state_hat: jax.Array) -> jax.Array:
        dtype = state_hat.dtype
        d_dx, d_dy = (jnp.asarray(1j * k, dtype) for k in (kx, ky))
        spectra = jnp.stack([state_hat, d_dx * state_hat, d_dy * state_hat])
        w, w_x, w_y = jnp.fft.irfft2(spectra, s=(n, n))  # each (..., 2, n, n)
        advection = w[..., :1, :, :] * w_x + w[..., 1:, :, :] * w_y
        return jnp.asarray(mask, dtype) * jnp.fft.rfft2(advection)

    return advection_hat


def make_step(
    n: int, dt: float, viscosity: float = 0.005, max_velocity: float = 2.0
) -> Callable[[jax.Array], jax.Array]:
    """Return `step(state) -> state_next`, one pseudo-spectral ETDRK4 step of 2-D Burgers.

    Args:
      n: grid points per side of [0, 1)² (even, >= 8).
      dt: time step; rejected with a ValueError above `max_stable_dt(n, viscosity,
        max_velocity)` (dt = 1e-3, the dataset's, is within it up to n = 336 at |u| <= 2).
      viscosity: ν >= 0.
      max_velocity: bound on |u|, |v| used for the advective limit.
    Returns:
      `step` on arrays of shape `(2, n, n)` (float32 or float64; the spectrum is complex64
      or complex128 to match), returning the same shape and dtype. The output lies in the
      2/3 band (so does the input's projection, which is what is stepped). Pure;
      `vmap`/`jit`/`scan`-able.
    """
    checks.check_grid(n)
    checks.check_nonnegative("viscosity", viscosity)
    checks.check_cfl(dt, max_velocity, LENGTH / n, MAX_CFL)
    kx, ky = wavenumbers_2d(n, LENGTH)
    mask = dealias_mask_2d(n)
    advection_hat = _advection_fn(n)
    spectral_step = make_etdrk4_step(-viscosity * (kx**2 + ky**2), lambda s: -advection_hat(s), dt)

    def step(state: jax.Array) -> jax.Array:
        state_hat = jnp.fft.rfft2(state) * jnp.asarray(mask, state.dtype)
        return jnp.fft.irfft2(spectral_step(state_hat), s=(n, n)).astype(state.dtype)

    return step
