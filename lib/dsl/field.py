"""The learned functions of DSL on Ω ⊂ ℝⁿ (Flax Linen, used through init/apply).

    VectorField   a(z) = c + MLP(z)            Ω → ℝⁿ   (the field whose lines DSL follows)
    Coefficients  (p, q, w)(z)                  Ω → ℝ₊* × ℝ × ℝ₊*   (the SL coefficients)
    Amplitudes    v(z)                          Ω → ℝᴷ   (slopes u_k′(t⁻) = v_k(γ(t⁻)))

Notes §B: "a: Ω → ℝⁿ, a neural network"; "p: Ω→ℝ₊*, q: Ω→ℝ and w: Ω→ℝ₊* are neural
networks"; "du_i/dt(t⁻) = v_i(γ_x(t⁻)) ... v_i is learnable".

Initialisation (our choice, [inferred]): the MLP parts start with a zero output layer, so at
init the field is the constant c (a random unit vector: straight parallel lines), p = w = 1
and q = 0 (eigenfunctions are the sines of each line), and v is constant.
Positivity: p = p_min + softplus(·), w = w_min + softplus(·), shifted so that the zero
output gives exactly 1.
"""
from __future__ import annotations

import math
from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.nn.mlp import MLP


def _unit_vector(key, shape, dtype=jnp.float32):
    v = jax.random.normal(key, shape, dtype)
    return v / jnp.linalg.norm(v)


def _softplus_inv(y: float) -> float:
    return math.log(math.expm1(y))


class VectorField(nn.Module):
    """z (..., n) -> a(z) (..., n) = c + MLP(z); c a learned vector (unit norm at init)."""

    dim: int
    widths: Sequence[int]
    activation: str = "tanh"
    init_scale: float = 0.0

    @nn.compact
    def __call__(self, z: jax.Array) -> jax.Array:
        c = self.param("drift", _unit_vector, (self.dim,))
        return c + MLP(self.widths, self.dim, self.activation, self.init_scale)(z)


class Coefficients(nn.Module):
    """z (..., n) -> (p, q, w), each (...,), with p ≥ p_min > 0 and w ≥ w_min > 0."""

    widths: Sequence[int]
    activation: str = "tanh"
    p_min: float = 0.05
    w_min: float = 0.05
    q_scale: float = 1.0
    init_scale: float = 0.0

    @nn.compact
    def __call__(self, z: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        o = MLP(self.widths, 3, self.activation, self.init_scale)(z)
        p = self.p_min + nn.softplus(o[..., 0] + _softplus_inv(1.0 - self.p_min))
        w = self.w_min + nn.softplus(o[..., 2] + _softplus_inv(1.0 - self.w_min))
        q = self.q_scale * o[..., 1]
        return p, q, w


class Amplitudes(nn.Module):
    """z (..., n) -> v(z) (..., K): the eigenfunctions' entry slopes (constant 1 at init)."""

    num_modes: int
    widths: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, z: jax.Array) -> jax.Array:
        return 1.0 + MLP(self.widths, self.num_modes, self.activation)(z)
