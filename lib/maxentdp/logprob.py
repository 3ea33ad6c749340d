"""log π(a|s) of a diffusion policy by the integral over noise levels (notes C.1).

With γ = ᾱ/(1−ᾱ) the I-MMSE identity (Kong et al., 2023) gives, for x ∈ R^A,

    log p(x) = −(A/2) log(2πe) + ½ ∫₀¹ [ᾱ A − E_ε‖ε̂(x_t) − ε‖²] / (ᾱ(1−ᾱ)) dᾱ,

x_t = √ᾱ x + √(1−ᾱ) ε, exact when ε̂ is the posterior-mean denoiser of p. On the
sampling grid ᾱ_0 > ᾱ_1 > ... > ᾱ_T this is the sum of the official `calc_log_prob`:

    log p(x) ≈ Σ_{i=1..T} (ᾱ_{i−1} − ᾱ_i)/(2ᾱ_i(1−ᾱ_i)) · (ᾱ_i A − mean_n ‖ε̂_{i,n} − ε_n‖²)
               − (A/2) log(2πe),

with `num_draws` noise draws per level; x̂₀ is clipped to the bound's box and ε̂ recomputed
from it, as in sampling (this keeps the last level, weight ≈ ᾱ_{T−1}/(2ᾱ_T) in the hundreds,
from amplifying the network's error at high noise). For the "tanh" bound the action density is
log π(a) = log p(x₀) − Σ log(1 − tanh²x₀) at x₀ = atanh(a).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from lib.maxentdp import diffusion_policy as dp
from lib.maxentdp.q_weighted import log_tanh_jacobian


def latent_log_prob(eps_fn: dp.EpsFn, x0: jax.Array, key: jax.Array, sched: dp.Schedule,
                    num_draws: int, clip_x0: float | None = None) -> jax.Array:
    """x0 (B, A) -> (B,) estimate of log p(x0); `eps_fn(x (N, B, A), log-SNR (N, B))`;
    `clip_x0`: the box half-width for x̂₀ (None: no clipping)."""
    num_levels = sched.steps
    a_dim = x0.shape[-1]
    ab = sched.alpha_bar[1:]                                    # (T,) the levels i = 1..T
    weight = (sched.alpha_bar[:-1] - ab) / (2.0 * ab * (1.0 - ab))
    eps = jax.random.normal(key, (num_levels, num_draws) + x0.shape)

    def level(ab_i, eps_i):
        x_t = jnp.sqrt(ab_i) * x0 + jnp.sqrt(1.0 - ab_i) * eps_i          # (N, B, A)
        pred = eps_fn(x_t, jnp.broadcast_to(dp.log_snr(ab_i), x_t.shape[:-1]))
        if clip_x0 is not None:
            x0_hat = jnp.clip((x_t - jnp.sqrt(1.0 - ab_i) * pred) / jnp.sqrt(ab_i),
                              -clip_x0, clip_x0)
            pred = (x_t - jnp.sqrt(ab_i) * x0_hat) / jnp.sqrt(1.0 - ab_i)
        return jnp.mean(jnp.sum((pred - eps_i) ** 2, axis=-1), axis=0)     # (B,)

    mse = jax.lax.map(lambda args: level(*args), (ab, eps))                 # (T, B)
    integral = jnp.sum(weight[:, None] * (ab[:, None] * a_dim - mse), axis=0)
    return integral - 0.5 * a_dim * jnp.log(2.0 * jnp.pi * jnp.e)


def policy_log_prob(net: dp.EpsNet, params, obs: jax.Array, x0: jax.Array, key: jax.Array,
                    sched: dp.Schedule, num_draws: int, bound: str) -> jax.Array:
    """log π(a|s) (B,) for actions a = to_action(x0, bound); obs (B, obs_dim), x0 (B, A)."""
    obs_n = jnp.broadcast_to(obs, (num_draws,) + obs.shape)
    eps_fn = lambda x, l: net.apply(params, obs_n, x, l)
    lp = latent_log_prob(eps_fn, x0, key, sched, num_draws, clip_x0=dp.x0_limit(bound))
    return lp - log_tanh_jacobian(x0) if bound == "tanh" else lp
