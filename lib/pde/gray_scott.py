"""2-D Gray–Scott reaction–diffusion, Fourier spectral with ETDRK4.

    ∂t u = D_u ∇²u − u v² + F (1 − u),
    ∂t v = D_v ∇²v + u v² − (F + κ) v,

on the periodic square [0, L)². Defaults are Pearson's (Science 261, 1993) setting:
L = 2.5, D_u = 2e-5, D_v = 1e-5, and (F, κ) = (0.04, 0.06), which grows a labyrinth of
stripes and spots from local perturbations of the trivial state (u, v) = (1, 0).
The diffusion and the linear decay (`−F u`, `−(F+κ) v`) form the exactly integrated
linear part; `∓u v² + F` is the nonlinear part. No de-aliasing: the fields are smooth on
the diffusion scale √(D/F) ≈ 0.02 (≥ 1 grid spacing at n ≥ 128), and the cubic term would
need a 1/2 rather than a 2/3 cut.

States have shape `(2, n, n)`, channels `(u, v)`, indexed `[c, y, x]`.
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lib.pde import checks
from lib.pde.etdrk4 import make_etdrk4_step
from lib.pde.spectral import grid_points_2d, wavenumbers_2d

FIELD_NAMES = ("u", "v")
LENGTH = 2.5
# The reaction rates are at most ~1 for 0 <= u, v <= 1: RK4's bound |λ dt| <= 2.78 with
# room for the coupling gives dt <= 2.
MAX_DT = 2.0


def make_step(
    n: int,
    dt: float = 1.0,
    length: float = LENGTH,
    diffusivity_u: float = 2e-5,
    diffusivity_v: float = 1e-5,
    feed: float = 0.04,
    kill: float = 0.06,
) -> Callable[[jax.Array], jax.Array]:
    """Return `step(state) -> state_next`, one ETDRK4 step of Gray–Scott.

    Args:
      n: grid points per side (even).
      dt: time step, `0 < dt <= MAX_DT` (diffusion is exact, so only the reaction limits it).
      length: side of the periodic square.
      diffusivity_u, diffusivity_v: D_u, D_v >= 0.
      feed, kill: F, κ >= 0.
    Returns:
      `step` on arrays of shape `(2, n, n)`. Pure; `vmap`/`jit`/`scan`-able.
    """
    checks.check_grid(n)
    checks.check_positive("length", length)
    for name, value in [("diffusivity_u", diffusivity_u), ("diffusivity_v", diffusivity_v),
                        ("feed", feed), ("kill", kill)]:
        checks.check_nonnegative(name, value)
    checks.check_positive("dt", dt)
    if dt > MAX_DT:
        raise ValueError(f"time step dt = {dt:g} is above the reaction stability limit {MAX_DT:g}")
    kx, ky = wavenumbers_2d(n, length)
    k2 = kx**2 + ky**2
    linear = np.stack([-diffusivity_u * k2 - feed, -diffusivity_v * k2 - (feed + kill)])
    feed_hat = np.zeros((2, n, n // 2 + 1))
    feed_hat[0, 0, 0] = feed * n * n  # F as the mean mode of the unnormalised rfft2

    def nonlinear(state_hat: jax.Array) -> jax.Array:
        u, v = jnp.fft.irfft2(state_hat, s=(n, n))
        reaction = jnp.fft.rfft2(u * v * v)
        return jnp.stack([-reaction, reaction]) + jnp.asarray(feed_hat, state_hat.dtype)

    spectral_step = make_etdrk4_step(linear, nonlinear, dt)

    def step(state: jax.Array) -> jax.Array:
        return jnp.fft.irfft2(spectral_step(jnp.fft.rfft2(state)), s=(n, n)).astype(state.dtype)

    return step


def random_initial_state(
    key: jax.Array,
    n: int,
    length: float = LENGTH,
    n_squares: int = 4,
    square_size: float = 0.2,
    noise: float = 0.01,
    dtype: jnp.dtype = jnp.float32,
) -> jax.Array:
    """Pearson's initial condition with random placement, shape `(2, n, n)`.

    The trivial state `(u, v) = (1, 0)` with `n_squares` squares of side `square_size`
    (periodically wrapped, centres uniform) set to `(1/2, 1/4)`, plus uniform noise of
    amplitude `noise` on both fields.
    """
    checks.check_grid(n)
    key_centres, key_noise = jax.random.split(key)
    centres = jax.random.uniform(key_centres, (n_squares, 2, 1, 1), dtype, 0.0, length)
    x, y = (jnp.asarray(c, dtype) for c in grid_points_2d(n, length))

    def inside(coord: jax.Array, centre: jax.Array) -> jax.Array:
        distance = jnp.mod(coord - centre + length / 2, length) - length / 2
        return jnp.abs(distance) <= square_size / 2

    patch = jnp.any(inside(x, centres[:, 0]) & inside(y, centres[:, 1]), axis=0)
    u = jnp.where(patch, 0.5, 1.0)
    v = jnp.where(patch, 0.25, 0.0)
    perturbation = noise * jax.random.uniform(key_noise, (2, n, n), dtype, -1.0, 1.0)
    return (jnp.stack([u, v]) + perturbation).astype(dtype)
