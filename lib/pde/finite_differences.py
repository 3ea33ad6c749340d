"""Fourth-order central finite differences on periodic grids (`jnp.roll`).

    f'  ≈ (−f[i+2] + 8 f[i+1] − 8 f[i−1] + f[i−2]) / (12 h)
    f'' ≈ (−f[i+2] + 16 f[i+1] − 30 f[i] + 16 f[i−1] − f[i−2]) / (12 h²)

These are the stencils P2C2Net's data generator uses and that MultiPDENet's learnable
5×5 filters contain (notes §1.2). Truncation errors: `−h⁴ f⁽⁵⁾/30` and `−h⁴ f⁽⁶⁾/90`.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp


def _shift(f: jax.Array, offset: int, axis: int) -> jax.Array:
    """`f[i + offset]` along `axis` (periodic)."""
    return jnp.roll(f, -offset, axis=axis)


def first_derivative(f: jax.Array, dx: float, axis: int) -> jax.Array:
    """∂f/∂x along `axis`, fourth order; same shape as `f`."""
    return (
        8 * (_shift(f, 1, axis) - _shift(f, -1, axis)) - (_shift(f, 2, axis) - _shift(f, -2, axis))
    ) / (12 * dx)


def second_derivative(f: jax.Array, dx: float, axis: int) -> jax.Array:
    """∂²f/∂x² along `axis`, fourth order; same shape as `f`."""
    return (
        16 * (_shift(f, 1, axis) + _shift(f, -1, axis))
        - (_shift(f, 2, axis) + _shift(f, -2, axis))
        - 30 * f
    ) / (12 * dx**2)


def laplacian(f: jax.Array, dx: float) -> jax.Array:
    """∇²f over the last two axes `(y, x)` with equal spacing `dx`, fourth order."""
    return second_derivative(f, dx, -1) + second_derivative(f, dx, -2)
