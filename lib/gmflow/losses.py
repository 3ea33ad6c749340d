"""GMFlow training losses (paper §3.2, §3.4, Alg. 1) and the L2 flow-matching baseline.

All take a velocity-GM function `gm_u_fn(x_t (B, G, C), t (B,)) -> GM` and clean data x₀
(B, G, C), draw t ~ U[t_min, 1] and noise from `key`, and return a scalar loss per
dimension.

    transition_loss(λ)  t_low = t(1 − λ); x_{t_low} = α x₀ + σ ε;
                        x_t ~ N(α_t/α_{t_low} x_{t_low}, σ_t² − (α_t/α_{t_low})² σ_{t_low}²);
                        loss = −log q_θ(x_{t_low} | x_t)/D with q_θ the Eq. 9 GM.
                        λ = 1 is the velocity KL loss of Eq. 6 (up to the constant D log σ_t).
    kl_loss             −log q_θ(u | x_t)/D, u = ε − x₀ (Eq. 6).
    l2_loss             ‖E_θ[u] − u‖²/D of the K = 1 mean (flow matching).

With K = 1 and s = 1, kl_loss = l2_loss/2 + const, so their gradients agree up to the
factor 1/2 (tested); with a learned s the factor is 1/(2 s²).
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from lib.gmflow import denoising, mixture
from lib.gmflow.mixture import GM

Array = jax.Array
GMFn = Callable[[Array, Array], GM]
LOSSES = ("gm_transition", "gm_kl", "l2")


def sample_times(key: Array, n: int, t_min: float = 1e-4) -> Array:
    """t ~ U[t_min, 1] (the toy setting of App. B.5): (n,)."""
    return jax.random.uniform(key, (n,), minval=t_min, maxval=1.0)


def _noisy(x0: Array, key: Array, t_min: float):
    k_t, k_e = jax.random.split(key)
    t = sample_times(k_t, x0.shape[0], t_min)
    eps = jax.random.normal(k_e, x0.shape, x0.dtype)
    a, s = denoising.alpha_sigma(t[:, None, None])
    return t, eps, a * x0 + s * eps


def kl_loss(gm_u_fn: GMFn, x0: Array, key: Array, t_min: float = 1e-4) -> Array:
    """Eq. 6: mean over the batch of −log q_θ(u | x_t)/D."""
    t, eps, x_t = _noisy(x0, key, t_min)
    return jnp.mean(mixture.nll_per_dim(gm_u_fn(x_t, t), eps - x0))


def l2_loss(gm_u_fn: GMFn, x0: Array, key: Array, t_min: float = 1e-4) -> Array:
    """Flow matching: mean over the batch of ‖E_θ[u | x_t] − u‖²/D."""
    t, eps, x_t = _noisy(x0, key, t_min)
    u_hat = mixture.mean(gm_u_fn(x_t, t))
    return jnp.mean(jnp.sum((u_hat - (eps - x0)) ** 2, axis=(-2, -1))) / (x0.shape[-2] * x0.shape[-1])


def transition_loss(gm_u_fn: GMFn, x0: Array, key: Array, trans_ratio: float,
                    t_min: float = 1e-4) -> Array:
    """§3.4 / Alg. 1 transition loss with ratio λ = trans_ratio ∈ (0, 1]; see module doc."""
    k_t, k_low, k_trans = jax.random.split(key, 3)
    t = sample_times(k_t, x0.shape[0], t_min)
    t_low = t * (1.0 - trans_ratio)
    a_l, s_l = denoising.alpha_sigma(t_low[:, None, None])
    a_t, s_t = denoising.alpha_sigma(t[:, None, None])
    x_low = a_l * x0 + s_l * jax.random.normal(k_low, x0.shape, x0.dtype)
    beta = jnp.maximum(s_t ** 2 - (a_t / a_l) ** 2 * s_l ** 2, 0.0)
    x_t = (a_t / a_l) * x_low + jnp.sqrt(beta) * jax.random.normal(k_trans, x0.shape, x0.dtype)
    gm_x0 = denoising.u_to_x0(gm_u_fn(x_t, t), x_t, t)
    trans = denoising.transition_gm(gm_x0, x_t, t, t_low)
    return jnp.mean(mixture.nll_per_dim(trans, x_low))


def loss_fn(kind: str, trans_ratio: float = 1.0, t_min: float = 1e-4):
    """The loss `(gm_u_fn, x0, key) -> scalar` named by kind (`LOSSES`)."""
    if kind == "gm_transition":
        if not 0.0 < trans_ratio <= 1.0:
            raise ValueError(f"transition ratio λ must be in (0, 1], got {trans_ratio}")
        return lambda f, x0, key: transition_loss(f, x0, key, trans_ratio, t_min)
    if kind == "gm_kl":
        return lambda f, x0, key: kl_loss(f, x0, key, t_min)
    if kind == "l2":
        return lambda f, x0, key: l2_loss(f, x0, key, t_min)
    raise ValueError(f"unknown loss {kind!r}; known: {LOSSES}")
