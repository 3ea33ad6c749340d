"""One discrete block's diffusion interface (`LabelProcess`) and its Gaussian family.

The Gaussian-Softmax process of the paper (`diffusion.gaussian_softmax_process`) and the
one-hot Gaussian baseline (`baselines.py`) are both `gaussian_label_process`es; D3PM
(`baselines.py`) implements the same interface. Kept apart from diffusion.py so that
baselines.py and diffusion.py both import it (no import cycle).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

Array = jax.Array


def snr(alpha_bar):
    return alpha_bar / (1 - alpha_bar)


def _gather(table: Array, t: Array, ndim: int) -> Array:
    """table[t] with trailing singleton axes so it broadcasts against an ndim-array."""
    v = table[t]
    return v.reshape(v.shape + (1,) * (ndim - v.ndim))


def gaussian_posterior(alpha_bar: Array, x_t: Array, x0_hat: Array, t: Array, s: Array):
    """q(x_s | x_t, x₀ = x0_hat) of a variance-preserving chain, 1 ≤ s < t: (mean, std).

    α_{t|s} = ᾱ_t/ᾱ_s, β = 1 − α_{t|s};
    mean = (√ᾱ_s β x̂₀ + √α_{t|s} (1−ᾱ_s) x_t)/(1−ᾱ_t), var = β(1−ᾱ_s)/(1−ᾱ_t).
    """
    a_t, a_s = _gather(alpha_bar, t, x_t.ndim), _gather(alpha_bar, s, x_t.ndim)
    a_ts = a_t / a_s
    beta = 1 - a_ts
    mean = (jnp.sqrt(a_s) * beta * x0_hat + jnp.sqrt(a_ts) * (1 - a_s) * x_t) / (1 - a_t)
    std = jnp.sqrt(jnp.maximum(beta * (1 - a_s) / (1 - a_t), 0.0))
    return mean, std


def gaussian_prior_kl(alpha_bar_T, x0: Array) -> Array:
    """Σ_last KL(N(√ᾱ_T x₀, 1−ᾱ_T) || N(0, 1)) in nats."""
    a = alpha_bar_T
    return 0.5 * jnp.sum(a * x0 ** 2 + (1 - a) - 1 - jnp.log(1 - a), -1)


class LabelProcess(NamedTuple):
    """Diffusion of one discrete block with D classes (all arrays (..., D)).

    noise(key, onehot, t) -> x_t            network input at step t (t: (...,) ints ≥ 1)
    prior(key, shape) -> x_T                a draw of the prior, shape + (D,)
    step(key, x_t, p_hat, t, s) -> x_s      one reverse step t -> s (1 ≤ s < t) given p̂(x₀)
    kl(onehot, x_t, p_hat, t) -> (...)      KL(q(x_{t−1}|x_t,x₀) || p(x_{t−1}|x_t)) nats, t ≥ 2
    prior_kl(onehot) -> (...)               KL(q(x_T|x₀) || prior) nats
    """
    name: str
    num_classes: int
    noise: Callable
    prior: Callable
    step: Callable
    kl: Callable
    prior_kl: Callable


X0_LOGITS = ("embedding_mean", "two_log_p")


def x0_logits_fn(name: str, embed: Callable) -> Callable:
    """p̂ (…, D) -> the x̂₀ the reverse step and the bound plug in for u(y₀):
    "embedding_mean" û = Σ_y p̂(y)·u(y) = embed(p̂) (u affine in the one-hot);
    "two_log_p" 2·log p̂ (the official code's `discrete_posterior_step`; p̂ floored at 1e-30
    so that a zero probability gives a finite logit)."""
    if name == "embedding_mean":
        return embed
    if name == "two_log_p":
        return lambda p: 2.0 * jnp.log(jnp.maximum(p, 1e-30))
    raise ValueError(f"x0_logits must be one of {X0_LOGITS}, got {name!r}")


def gaussian_label_process(name: str, num_classes: int, alpha_bar: np.ndarray, lo: float,
                           hi: float, simplex: bool,
                           x0_logits: str = "embedding_mean") -> LabelProcess:
    """Gaussian diffusion of the label embedding u(y) = lo + (hi − lo)·onehot(y).

    simplex=True: the network sees softmax(l_t) and steps run on log x_t (Gaussian-Softmax);
    simplex=False: the network sees l_t itself (one-hot Gaussian baseline).
    x0_logits: the x̂₀ of the reverse step (`x0_logits_fn`); "two_log_p" needs simplex=True.
    With simplex=True only l up to a per-slot shift is observed (softmax), so the KL terms
    compare x̂₀ and u(y₀) after removing their mean over classes (a no-op for
    "embedding_mean", whose difference (hi − lo)(onehot − p̂) already sums to 0).
    """
    if x0_logits != "embedding_mean" and not simplex:
        raise ValueError(f"x0_logits={x0_logits!r} is a Gaussian-Softmax (simplex) option; "
                         f"{name} diffuses the embedding itself")
    ab = jnp.asarray(alpha_bar, jnp.float32)
    snr_t = jnp.asarray(snr(np.asarray(alpha_bar, np.float64)), jnp.float32)
    embed = lambda p: lo + (hi - lo) * p
    out = (lambda l: jax.nn.softmax(l, -1)) if simplex else (lambda l: l)
    latent = (lambda x: jnp.log(jnp.maximum(x, 1e-30))) if simplex else (lambda x: x)
    shape_d = lambda shape: tuple(shape) + (num_classes,)

    def noise(key, onehot, t):
        a = _gather(ab, t, onehot.ndim)
        eps = jax.random.normal(key, onehot.shape)
        return out(jnp.sqrt(a) * embed(onehot) + jnp.sqrt(1 - a) * eps)

    def prior(key, shape):
        return out(jax.random.normal(key, shape_d(shape)))

    x0_hat = x0_logits_fn(x0_logits, embed)

    def step(key, x_t, p_hat, t, s):
        mean, std = gaussian_posterior(ab, latent(x_t), x0_hat(p_hat), t, s)
        return out(mean + std * jax.random.normal(key, x_t.shape))

    def kl(onehot, x_t, p_hat, t):
        del x_t
        w = snr_t[t - 1] - snr_t[t]
        diff = embed(onehot) - x0_hat(p_hat)
        if simplex:
            diff = diff - jnp.mean(diff, -1, keepdims=True)
        return 0.5 * w * jnp.sum(diff ** 2, -1)

    def prior_kl(onehot):
        return gaussian_prior_kl(ab[-1], embed(onehot))

    return LabelProcess(name, num_classes, noise, prior, step, kl, prior_kl)
