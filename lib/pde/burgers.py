"""2-D viscous Burgers equation on the periodic unit square, as in P2C2Net's data (notes §2.1).

    ∂t u = ν ∇²u − (u ∂x + v ∂y) u,    ∂t v = ν ∇²v − (u ∂x + v ∂y) v,

ν = 0.005 (R = 200), fourth-order central differences (`finite_differences.py`),
classical RK4 through `lib.pde.integrators` at dt = 1e-3. States have shape `(2, n, n)`,
channels `(u, v)`, indexed `[c, y, x]`; grid points at `(j, i)/n`.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lib.pde import checks
from lib.pde import finite_differences as fd
from lib.pde.integrators import make_stepper

FIELD_NAMES = ("u", "v")
LENGTH = 1.0
# Largest |eigenvalue| · dt that RK4 tolerates: 2.78 on the negative real axis (diffusion),
# 2√2 on the imaginary axis (advection). The 4th-order stencils have symbols of modulus at
# most 16/3 / h² (second derivative) and 1.372 / h (first derivative).
_RK4_REAL_LIMIT = 2.78
_RK4_IMAG_LIMIT = 2 * np.sqrt(2)
_D1_SYMBOL_MAX = 1.372
_D2_SYMBOL_MAX = 16 / 3


def vector_field(t: jax.Array, state: jax.Array, viscosity: float) -> jax.Array:
    """Right-hand side `∂t (u, v)`; `state` of shape `(2, n, n)`; signature `f(t, y, args)`."""
    del t
    dx = LENGTH / state.shape[-1]
    u, v = state[0], state[1]
    d_dx = fd.first_derivative(state, dx, axis=-1)
    d_dy = fd.first_derivative(state, dx, axis=-2)
    return viscosity * fd.laplacian(state, dx) - (u * d_dx + v * d_dy)


def max_stable_dt(n: int, viscosity: float, max_velocity: float) -> float:
    """The largest RK4 step for which both linearised diffusion and advection are stable."""
    dx = LENGTH / n
    diffusion = _RK4_REAL_LIMIT * dx**2 / (2 * _D2_SYMBOL_MAX * viscosity) if viscosity else np.inf
    advection = _RK4_IMAG_LIMIT * dx / (2 * _D1_SYMBOL_MAX * max_velocity)
    return float(min(diffusion, advection))


def make_step(
    n: int, dt: float = 1e-3, viscosity: float = 0.005, max_velocity: float = 2.0
) -> Callable[[jax.Array], jax.Array]:
    """Return `step(state) -> state_next`, one RK4 step of 2-D Burgers.

    Args:
      n: grid points per side of [0, 1)².
      dt: time step; rejected with a ValueError above `max_stable_dt(n, viscosity,
        max_velocity)` (e.g. dt = 1e-3 at ν = 0.005 is stable up to n = 228).
      viscosity: ν >= 0.
      max_velocity: bound on |u|, |v| used for the advective limit (the P2C2Net initial
        conditions stay below 2).
    Returns:
      `step` on arrays of shape `(2, n, n)`. Pure; `vmap`/`jit`/`scan`-able.
    """
    checks.check_grid(n)
    checks.check_nonnegative("viscosity", viscosity)
    checks.check_positive("dt", dt)
    limit = max_stable_dt(n, viscosity, max_velocity)
    if dt > limit:
        raise ValueError(
            f"time step dt = {dt:g} is above the RK4 stability (CFL) limit {limit:g} for "
            f"n = {n}, viscosity = {viscosity:g}, max_velocity = {max_velocity:g}; "
            f"use dt <= {limit:g} or a coarser grid"
        )
    rk4 = make_stepper(vector_field, method="rk4")

    def step(state: jax.Array) -> jax.Array:
        return rk4(state, 0.0, dt, viscosity)

    return step


def random_initial_state(
    key: jax.Array, n: int, n_modes: int = 10, dtype: jnp.dtype = jnp.float32
) -> jax.Array:
    """P2C2Net's random Fourier-series initial condition, shape `(2, n, n)`.

    For each component independently:
      `W(x, y) = Σ_{p, q} A_pq sin(2π(p x + q y)) + B_pq cos(2π(p x + q y))` with
      `p, q ∈ {−n_modes//2, …, n_modes − 1 − n_modes//2}` (10 × 10 modes: −5…4),
      `A, B ~ N(0, 1)`; then `(2 W / max W + c) / 3` with `c ~ N(−1, 1)` (mean −1, std 1).
    The normalisation divides by the maximum of W (not of |W|) and the result by 3, as
    P2C2Net's `dataGen.py` does; the fields are then O(1) with a random mean ≈ c/3.
    """
    checks.check_grid(n)
    p = np.arange(n_modes) - n_modes // 2
    waves = np.exp(2j * np.pi * np.outer(p, np.arange(n) / n))  # e^{2πi p x_j}, (n_modes, n)
    key_coef, key_mean = jax.random.split(key)
    a, b = jax.random.normal(key_coef, (2, 2, n_modes, n_modes), dtype)  # (sin/cos, field, p, q)
    # A sin θ + B cos θ = Re[(B − iA) e^{iθ}] with θ = 2π(p x + q y).
    w = jnp.einsum("fpq,qy,px->fyx", b - 1j * a, waves, waves).real.astype(dtype)
    mean = -1.0 + jax.random.normal(key_mean, (2, 1, 1), dtype)
    return (2 * w / jnp.max(w, axis=(-2, -1), keepdims=True) + mean) / 3
