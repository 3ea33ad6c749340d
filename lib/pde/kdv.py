"""1-D Korteweg–de Vries equation, Fourier spectral with ETDRK4.

    ∂t u + a u ∂x u + b ∂³x u = 0     on the periodic interval [0, L),

with `a = 6, b = 1` by default (the textbook form whose one-soliton solution is
`u = c/2 sech²(√c/2 (x − c t − x₀))`); MultiPDENet's notes write `a = 1, b = δ`, which is
the same equation after rescaling u and t, and both are available through the arguments.
In Fourier space `dû/dt = i b k³ û − (a/2) i k FFT(u²)`: the dispersive part is integrated
exactly by ETDRK4 (`etdrk4.py`, Kassam & Trefethen's KdV example), the quadratic term is
de-aliased by the 2/3 rule. The mean of u (mass) is conserved exactly.

States have shape `(1, n)`.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from lib.pde import checks
from lib.pde.etdrk4 import make_etdrk4_step
from lib.pde.spectral import dealias_mask_1d, grid_points_1d, wavenumbers_1d

FIELD_NAMES = ("u",)
LENGTH = 32.0
# The nonlinear term advects with speed a·u; with ETDRK4 (RK4 on the imaginary axis,
# |λ dt| <= 2√2) and de-aliased wavenumbers up to (2π/3)/dx: dt·a·max|u|/dx <= 1.35.
MAX_CFL = 1.2


def soliton(
    x: jax.Array,
    speed: jax.Array,
    position: jax.Array,
    t: float = 0.0,
    length: float = LENGTH,
    nonlinear_coefficient: float = 6.0,
    dispersion: float = 1.0,
) -> jax.Array:
    """The one-soliton solution `(3c/a) sech²(√(c/b)/2 (x − c t − x₀))` on the periodic
    interval (distance to the nearest image of the centre; the kink this leaves at the
    antipode is of size `exp(−√(c/b) L/2)`). Shape of `x`."""
    distance = jnp.mod(x - position - speed * t + length / 2, length) - length / 2
    width = jnp.sqrt(speed / dispersion) / 2
    return 3 * speed / nonlinear_coefficient / jnp.cosh(width * distance) ** 2


def make_step(
    n: int,
    dt: float = 0.01,
    length: float = LENGTH,
    nonlinear_coefficient: float = 6.0,
    dispersion: float = 1.0,
    max_amplitude: float = 2.0,
) -> Callable[[jax.Array], jax.Array]:
    """Return `step(u) -> u_next`, one ETDRK4 step of KdV.

    Args:
      n: grid points on [0, length) (even).
      dt: time step; rejected above `MAX_CFL * dx / (a * max_amplitude)`.
      length: period L.
      nonlinear_coefficient, dispersion: `a` and `b` of `u_t + a u u_x + b u_xxx = 0`.
      max_amplitude: bound on |u| used for the CFL check.
    Returns:
      `step` on arrays of shape `(1, n)`. Pure; `vmap`/`jit`/`scan`-able.
    """
    checks.check_grid(n)
    checks.check_positive("length", length)
    checks.check_cfl(dt, abs(nonlinear_coefficient) * max_amplitude, length / n, MAX_CFL)
    k = wavenumbers_1d(n, length)
    linear = 1j * dispersion * k**3
    advect = -0.5j * nonlinear_coefficient * k * dealias_mask_1d(n)

    def nonlinear(u_hat: jax.Array) -> jax.Array:
        u = jnp.fft.irfft(u_hat, n=n)
        return jnp.asarray(advect, u_hat.dtype) * jnp.fft.rfft(u * u)

    spectral_step = make_etdrk4_step(linear, nonlinear, dt)

    def step(u: jax.Array) -> jax.Array:
        return jnp.fft.irfft(spectral_step(jnp.fft.rfft(u)), n=n).astype(u.dtype)

    return step


def random_initial_state(
    key: jax.Array,
    n: int,
    length: float = LENGTH,
    n_solitons: int = 2,
    speed_range: tuple[float, float] = (0.5, 2.0),
    dtype: jnp.dtype = jnp.float32,
) -> jax.Array:
    """A sum of `n_solitons` solitons (a = 6, b = 1) with speeds uniform in `speed_range`
    and centres uniform on [0, L); the faster ones overtake the slower ones, so trajectories
    show soliton collisions. Shape `(1, n)`."""
    checks.check_grid(n)
    key_speed, key_position = jax.random.split(key)
    speeds = jax.random.uniform(key_speed, (n_solitons, 1), dtype, *speed_range)
    positions = jax.random.uniform(key_position, (n_solitons, 1), dtype, 0.0, length)
    x = jnp.asarray(grid_points_1d(n, length), dtype)
    return soliton(x, speeds, positions, length=length).sum(axis=0, keepdims=True)
