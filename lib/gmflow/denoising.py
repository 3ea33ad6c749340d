"""Analytic conversions between GM velocity, x₀ ("denoising") and transition distributions.

Schedule (paper Eq. 2, linear flow matching): α_t = 1 − t, σ_t = t, x_t = α_t x₀ + σ_t ε,
u = ε − x₀ = (x_t − x₀)/σ_t. Points are (..., G, C) arrays; GMs are `mixture.GM`; times are
scalars or (...,) arrays broadcast over the batch.

    u_to_x0 / x0_to_u      μˣ_k = x_t − σ_t μ_k, sₓ = σ_t s          (§3.2, `u_to_x_0`)
    transition_gm          q(x_{t'} | x_t), Eq. 9 (c1, c2, c3)
    convert_x0_gm          q̂(x₀ | x_τ) from q(x₀ | x_t), Eq. 10 (GM-ODE)
    data_posterior         the exact q(x₀ | x_t) of a GM data set (the analytic test case)
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.gmflow.mixture import GM, gaussian_mask

Array = jax.Array


def alpha_sigma(t):
    """(α_t, σ_t) = (1 − t, t)."""
    return 1.0 - t, t


def _b(t: Array, x: Array) -> Array:
    """Broadcast a scalar or (...,) time against points (..., G, C) -> (..., 1, 1)."""
    return jnp.asarray(t, x.dtype).reshape(jnp.shape(t) + (1, 1))


def u_to_x0(gm_u: GM, x_t: Array, t) -> GM:
    """Velocity GM -> x₀ GM at (x_t, t): means x_t − σ_t μ_k, log-std + log σ_t."""
    sigma = jnp.asarray(t, x_t.dtype)
    means = x_t[..., None, :, :] - _b(sigma, x_t)[..., None, :, :] * gm_u.means
    return GM(means, gm_u.logweights, gm_u.logstd + jnp.log(sigma))


def x0_to_u(gm_x0: GM, x_t: Array, t) -> GM:
    """x₀ GM -> velocity GM at (x_t, t) (inverse of `u_to_x0`, t > 0)."""
    sigma = jnp.asarray(t, x_t.dtype)
    means = (x_t[..., None, :, :] - gm_x0.means) / _b(sigma, x_t)[..., None, :, :]
    return GM(means, gm_x0.logweights, gm_x0.logstd - jnp.log(sigma))


def transition_coefficients(t, t_next):
    """(c1, c2, c3) of Eq. 9 for the step t -> t' = t_next < t:
    β = σ_t² − (α_t/α')² σ'², c1 = (σ'/σ_t)² α_t/α', c2 = β α'/σ_t², c3 = β σ'²/σ_t²."""
    a, s = alpha_sigma(t)
    a2, s2 = alpha_sigma(t_next)
    beta = s ** 2 - (a / a2) ** 2 * s2 ** 2
    return (s2 / s) ** 2 * (a / a2), beta * a2 / s ** 2, beta * s2 ** 2 / s ** 2


def transition_gm(gm_x0: GM, x_t: Array, t, t_next) -> GM:
    """q(x_{t'} | x_t) = Σ_k A_k N(c1 x_t + c2 μˣ_k, (c3 + c2² sₓ²) I) (Eq. 9)."""
    c1, c2, c3 = transition_coefficients(jnp.asarray(t, x_t.dtype), jnp.asarray(t_next, x_t.dtype))
    means = _b(c1, x_t)[..., None, :, :] * x_t[..., None, :, :] \
        + _b(c2, x_t)[..., None, :, :] * gm_x0.means
    var = c3 + c2 ** 2 * jnp.exp(2.0 * gm_x0.logstd)
    return GM(means, gm_x0.logweights, 0.5 * jnp.log(var))


def convert_x0_gm(gm_x0: GM, x_t: Array, t, x_tau: Array, tau) -> GM:
    """Eq. 10: q̂(x₀ | x_τ) ∝ N(x_τ; α_τ x₀, σ_τ²) / N(x_t; α_t x₀, σ_t²) · q(x₀ | x_t).

    The ratio is the Gaussian factor in x₀ with precision α_τ²/σ_τ² − α_t²/σ_t² (≥ 0 for
    τ ≤ t) and linear term α_τ x_τ/σ_τ² − α_t x_t/σ_t²; τ = t returns the GM unchanged.
    Needs 0 < τ ≤ t.
    """
    a_t, s_t = alpha_sigma(jnp.asarray(t, x_t.dtype))
    a_u, s_u = alpha_sigma(jnp.asarray(tau, x_t.dtype))
    precision = a_u ** 2 / s_u ** 2 - a_t ** 2 / s_t ** 2
    h = _b(a_u / s_u ** 2, x_t) * x_tau - _b(a_t / s_t ** 2, x_t) * x_t
    precision = jnp.broadcast_to(precision, gm_x0.logstd.shape)
    return gaussian_mask(gm_x0, precision, h)


def data_posterior(data: GM, x_t: Array, t) -> GM:
    """Exact q(x₀ | x_t) when the data are the GM `data` (no batch dims: means (K, G, C)).

    Bayes: p(x₀) N(x_t; α_t x₀, σ_t² I) is `data` masked by precision α_t²/σ_t² and linear
    term α_t x_t/σ_t², again a GM with a shared std. Returns a GM with x_t's batch dims.
    """
    batch = x_t.shape[:-2]
    prior = GM(jnp.broadcast_to(data.means, batch + data.means.shape),
               jnp.broadcast_to(data.logweights, batch + data.logweights.shape),
               jnp.broadcast_to(data.logstd, batch))
    a, s = alpha_sigma(jnp.asarray(t, x_t.dtype))
    precision = jnp.broadcast_to(a ** 2 / s ** 2, batch)
    return gaussian_mask(prior, precision, _b(a / s ** 2, x_t) * x_t)


def exact_velocity_gm(data: GM, x_t: Array, t) -> GM:
    """The exact velocity GM q(u | x_t) of a GM data set (what a perfect GMFlow outputs)."""
    return x0_to_u(data_posterior(data, x_t, t), x_t, t)
