"""Soft Actor-Critic with a tanh-squashed Gaussian policy (Haarnoja et al., 2018), the
baseline MaxEntDP is compared with; it shares the critics, the buffer and the collector.

  GaussianActor(s) -> (μ, log σ) (B, A) each, log σ clipped to [LOG_STD_MIN, LOG_STD_MAX]
  sample          a = tanh(μ + σ n), log π(a|s) = log N(u; μ, σ²) − Σ log(1 − tanh²u)
  actor_loss      mean_b(α log π(a_b|s_b) − min_i Q_i(s_b, a_b)),  a_b reparameterised
  alpha_loss      −α·mean_b(log π(a_b|s_b) + H̄)  with α = exp(log α), H̄ = −A by default
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.maxentdp.networks import MLP
from lib.maxentdp.q_weighted import log_tanh_jacobian

LOG_STD_MIN, LOG_STD_MAX = -10.0, 2.0


class GaussianActor(nn.Module):
    act_dim: int
    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = MLP(self.hidden, None, self.activation)(obs)
        mean = nn.Dense(self.act_dim)(h)
        log_std = jnp.clip(nn.Dense(self.act_dim)(h), LOG_STD_MIN, LOG_STD_MAX)
        return mean, log_std


def gaussian_log_prob(u: jax.Array, mean: jax.Array, log_std: jax.Array) -> jax.Array:
    """Σ_a log N(u_a; μ_a, σ_a²) over the last axis."""
    z = (u - mean) * jnp.exp(-log_std)
    return jnp.sum(-0.5 * z ** 2 - log_std - 0.5 * jnp.log(2.0 * jnp.pi), axis=-1)


def sample(actor: GaussianActor, params, obs: jax.Array,
           key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(action (B, A) in (−1, 1), log π(action|s) (B,)), reparameterised in `params`."""
    mean, log_std = actor.apply(params, obs)
    u = mean + jnp.exp(log_std) * jax.random.normal(key, mean.shape)
    return jnp.tanh(u), gaussian_log_prob(u, mean, log_std) - log_tanh_jacobian(u)


def deterministic(actor: GaussianActor, params, obs: jax.Array) -> jax.Array:
    """The evaluation action tanh(μ(s))."""
    return jnp.tanh(actor.apply(params, obs)[0])


def actor_loss(actor: GaussianActor, params, obs: jax.Array, key: jax.Array, q_fn,
               alpha: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(mean(α log π − min_i Q_i), log π (B,)); `q_fn(obs, act) -> (2, B)`."""
    act, logp = sample(actor, params, obs, key)
    return jnp.mean(alpha * logp - jnp.min(q_fn(obs, act), axis=0)), logp


def alpha_loss(log_alpha: jax.Array, logp: jax.Array, target_entropy: float) -> jax.Array:
    """−exp(log α)·mean(log π + H̄) (gradient pushes the entropy −E log π towards H̄)."""
    return -jnp.exp(log_alpha) * jnp.mean(jax.lax.stop_gradient(logp) + target_entropy)
