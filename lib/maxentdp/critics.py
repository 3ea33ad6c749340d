"""Twin Q networks with target copies (shared by MaxEntDP and SAC).

  TwinQ(s, a) -> (2, ...)            two independent MLPs on [s, a] (notes: (256, 256), ReLU)
  soft_td_target                     y = r + γ·mask·(min_i Q̄_i(s', a') − α·log π(a'|s'))
  soft_max_value                     V(s') = α log ∫ exp(Q̄(s', a)/α) da by uniform samples
                                     (soft Q-learning's backup, the `softmax` option)
  critic_loss                        Σ_i mean_batch (Q_i(s, a) − y)²
  polyak                             θ̄ ← (1 − τ) θ̄ + τ θ
"""
from __future__ import annotations

from typing import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from lib.maxentdp.networks import MLP


class TwinQ(nn.Module):
    """obs (..., obs_dim), act (..., A) -> (2, ...) Q-values of the two critics."""

    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array, act: jax.Array) -> jax.Array:
        x = jnp.concatenate([obs, act], axis=-1)
        q1 = MLP(self.hidden, 1, self.activation)(x)[..., 0]
        q2 = MLP(self.hidden, 1, self.activation)(x)[..., 0]
        return jnp.stack([q1, q2])


def soft_td_target(reward: jax.Array, mask: jax.Array, q_next: jax.Array,
                   logp_next: jax.Array, gamma: float, alpha: jax.Array) -> jax.Array:
    """y (B,) = r + γ·mask·(min_i Q̄_i(s', a') − α log π(a'|s')); q_next (2, B)."""
    return reward + gamma * mask * (jnp.min(q_next, axis=0) - alpha * logp_next)


def soft_max_value(q: jax.Array, alpha: jax.Array, act_dim: int) -> jax.Array:
    """Soft-max state value from Q at M uniform actions on [−1, 1]^A: q (M, B) -> (B,).

    V(s') = α log ∫_{[−1,1]^A} exp(Q(s', a)/α) da
          ≈ α (logsumexp_j Q(s', a_j)/α − log M) + α A log 2,
    the importance-sampled soft-max of soft Q-learning (Haarnoja et al. 2017, eq. 10 with a
    uniform proposal of density 2^{−A}); it values s' by the soft-optimal policy
    exp((Q − V)/α) rather than by the current policy's samples.
    """
    m = q.shape[0]
    log_mean = jax.nn.logsumexp(q / alpha, axis=0) - jnp.log(m)
    return alpha * (log_mean + act_dim * jnp.log(2.0))


def critic_loss(q_net: TwinQ, params, obs: jax.Array, act: jax.Array,
                target: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(Σ_i mean_b (Q_i(s_b, a_b) − y_b)², Q (2, B)); `target` is treated as a constant."""
    q = q_net.apply(params, obs, act)
    return jnp.sum(jnp.mean((q - jax.lax.stop_gradient(target)) ** 2, axis=-1)), q


def polyak(target, online, tau: float):
    """Soft target update θ̄ ← (1 − τ) θ̄ + τ θ, leaf by leaf."""
    return jax.tree.map(lambda t, o: (1.0 - tau) * t + tau * o, target, online)
