"""Q-weighted noise estimation (QNE): the diffusion policy's regression target (notes C.1).

For the target policy π*(a|s) ∝ exp(Q(s, a)/α) the ideal ε-prediction at a noisy latent
x_t = √ᾱ x₀ + √(1−ᾱ) ε is the posterior mean E[ε | x_t] under x₀ ~ π*, i.e.
−√(1−ᾱ) ∇ log p_t(x_t) (the scaled score of the noised target). QNE estimates it by
self-normalised importance sampling:

  1. candidates x₀^(k) = x_t/√ᾱ + (√(1−ᾱ)/√ᾱ) e_k, k = 1..K: N(x_t/√ᾱ, (1−ᾱ)/ᾱ I), which is
     N(x_t; √ᾱ x₀, (1−ᾱ) I) read as a density in x₀, truncated to the policy's support:
     x₀^(k) ∈ [−1, 1]^A for "clip" (the official code), [−U_MAX, U_MAX]^A for the "tanh"
     latent; where the truncated sampler overflows far in the tail the clipped normal is
     used, as the official code does;
  2. w_k = softmax_k(log π*(x₀^(k))) with log π* = Q̄(s, a(x₀))/α (+ Σ log(1 − tanh²x₀) for
     the "tanh" bound: the density of the latent, so the action density is ∝ exp(Q/α));
  3. ε̂ = −Σ_k w_k e_k   (since x_t = √ᾱ x₀^(k) − √(1−ᾱ) e_k, candidate k's noise is −e_k);
  4. loss ‖ε̂ − ε_θ(s, x_t, log-SNR)‖².
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from lib.maxentdp import diffusion_policy as dp


def noise_latents(key: jax.Array, x0: jax.Array, t_min: float = dp.T_MIN,
                  t_max: float = dp.T_MAX) -> tuple[jax.Array, jax.Array]:
    """x0 (B, A) -> (x_t (B, A), ᾱ (B, 1)) with t ~ U[t_min, t_max] per row (step 1)."""
    kt, ke = jax.random.split(key)
    t = jax.random.uniform(kt, (x0.shape[0], 1), minval=t_min, maxval=t_max)
    ab = dp.alpha_bar(t)
    return jnp.sqrt(ab) * x0 + jnp.sqrt(1.0 - ab) * jax.random.normal(ke, x0.shape), ab


def candidates(key: jax.Array, x_t: jax.Array, ab: jax.Array, num: int,
               bound: str) -> tuple[jax.Array, jax.Array]:
    """x_t (B, A), ᾱ (B, 1) -> (e (num, B, A), x₀ (num, B, A)) with x₀ = m + s·e,
    m = x_t/√ᾱ, s = √(1−ᾱ)/√ᾱ; e ~ N(0, I) truncated so that |x₀| ≤ the bound's box
    (1 for "clip", U_MAX for the "tanh" latent)."""
    if bound not in dp.BOUNDS:
        raise ValueError(f"unknown bound {bound!r}; expected one of {list(dp.BOUNDS)}")
    limit = dp.x0_limit(bound)
    m = x_t / jnp.sqrt(ab)
    s = jnp.sqrt(1.0 - ab) / jnp.sqrt(ab)
    shape = (num,) + x_t.shape
    kt, kn = jax.random.split(key)
    e = jax.random.truncated_normal(kt, (-limit - m) / s, (limit - m) / s, shape)
    fallback = (jnp.clip(m + s * jax.random.normal(kn, shape), -limit, limit) - m) / s
    e = jnp.where(jnp.isfinite(e), e, fallback)
    return e, m + s * e


def qne_target(key: jax.Array, x_t: jax.Array, ab: jax.Array,
               log_target: Callable[[jax.Array], jax.Array], num: int, bound: str) -> jax.Array:
    """ε̂ (B, A) = −Σ_k softmax_k(log_target(x₀^(k))) e_k; `log_target`: (num, B, A) -> (num, B)."""
    e, x0 = candidates(key, x_t, ab, num, bound)
    w = jax.nn.softmax(log_target(x0), axis=0)
    return -jnp.sum(w[..., None] * e, axis=0)


def log_tanh_jacobian(x: jax.Array) -> jax.Array:
    """Σ_a log(1 − tanh²(x_a)) over the last axis, computed stably."""
    return jnp.sum(2.0 * (jnp.log(2.0) - x - jax.nn.softplus(-2.0 * x)), axis=-1)


def soft_q_log_target(q_fn: Callable[[jax.Array], jax.Array], alpha: jax.Array,
                      bound: str) -> Callable[[jax.Array], jax.Array]:
    """log π*(x₀) up to a constant: Q(a(x₀))/α, plus the tanh Jacobian for "tanh".
    `q_fn`: actions (num, B, A) -> (num, B)."""

    def log_target(x0):
        lt = q_fn(dp.to_action(x0, bound)) / alpha
        return lt + log_tanh_jacobian(x0) if bound == "tanh" else lt

    return log_target


def qne_loss(net: dp.EpsNet, params, obs: jax.Array, actions: jax.Array, key: jax.Array,
             log_target: Callable[[jax.Array], jax.Array], num: int, bound: str) -> jax.Array:
    """The actor loss: replay actions (B, A) are mapped to latents, noised at a uniform t,
    and ε_θ regresses onto the (stop-gradient) QNE target."""
    kn, kc = jax.random.split(key)
    x_t, ab = noise_latents(kn, dp.from_action(actions, bound))
    target = jax.lax.stop_gradient(qne_target(kc, x_t, ab, log_target, num, bound))
    return dp.denoising_loss(net, params, obs, x_t, dp.log_snr(ab[:, 0]), target)
