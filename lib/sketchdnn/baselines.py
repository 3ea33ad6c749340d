"""Label-diffusion baselines sharing the `label_process.LabelProcess` interface.

One-hot Gaussian (notes A.10 (i)): the one-hot is treated as a real vector, embedded as
u(y) = 2·onehot(y) − 1, and diffused with the continuous DDPM schedule ᾱ_t; the network sees
the noisy real vector (no softmax), the reverse step is the DDPM posterior with
x̂₀ = 2p̂ − 1, and the label is the argmax at the end.

D3PM-style discrete diffusion (Austin et al. 2021, uniform transitions):
    q(x_t | x₀) = Cat(a_t·onehot(x₀) + (1 − a_t)/D),   a_t = √ᾱ_t
(the keep probability is matched to the Gaussian-Softmax schedule, whose discrete SNR is
that of mixing at rate √ᾱ_t — our choice, the paper's baseline is not specified).
With α_{t|s} = a_t/a_s the posterior is
    q(x_s | x_t, x₀) ∝ (α_{t|s} onehot(x_t) + (1 − α_{t|s})/D) ⊙ (a_s onehot(x₀) + (1 − a_s)/D),
and the model averages it over the network's p̂(x₀ | x_t) (D3PM's x₀-parameterisation, exact
when p̂ is the true posterior). The network sees one-hot x_t.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.sketchdnn.label_process import LabelProcess, gaussian_label_process

_TINY = 1e-20


def onehot_gaussian_process(num_classes: int, alpha_bar: np.ndarray) -> LabelProcess:
    """Labels as plain Gaussian variables in {−1, +1}^D with the continuous schedule."""
    return gaussian_label_process("onehot_gaussian", num_classes, alpha_bar, -1.0, 1.0,
                                  simplex=False)


def d3pm_keep(alpha_bar: np.ndarray) -> np.ndarray:
    """Keep probabilities a_t = √ᾱ_t (float64, (T+1,))."""
    return np.sqrt(np.asarray(alpha_bar, np.float64))


def _cat_kl(p: jax.Array, q: jax.Array) -> jax.Array:
    return jnp.sum(p * (jnp.log(p + _TINY) - jnp.log(q + _TINY)), -1)


def d3pm_process(num_classes: int, alpha_bar: np.ndarray) -> LabelProcess:
    d = num_classes
    keep = jnp.asarray(d3pm_keep(alpha_bar), jnp.float32)

    def marginal(p0, t):
        a = keep[t][..., None]
        return a * p0 + (1 - a) / d

    def posterior(x_t, p0, t, s):
        """Σ_c p0(c) q(x_s | x_t, x₀ = c): (…, D) probabilities over x_s."""
        a_t, a_s = keep[t][..., None, None], keep[s][..., None, None]
        a_ts = a_t / a_s
        eye = jnp.eye(d, dtype=x_t.dtype)                           # rows: x₀ = c
        w = (a_ts * x_t[..., None, :] + (1 - a_ts) / d) * (a_s * eye + (1 - a_s) / d)
        w = w / jnp.sum(w, -1, keepdims=True)                       # q(x_s | x_t, c)
        return jnp.einsum("...c,...cs->...s", p0, w)

    def sample_onehot(key, probs):
        idx = jax.random.categorical(key, jnp.log(probs + _TINY), -1)
        return jax.nn.one_hot(idx, d, dtype=probs.dtype)

    def noise(key, onehot, t):
        return sample_onehot(key, marginal(onehot, jnp.broadcast_to(t, onehot.shape[:-1])))

    def prior(key, shape):
        return sample_onehot(key, jnp.full(tuple(shape) + (d,), 1.0 / d))

    def step(key, x_t, p_hat, t, s):
        t = jnp.broadcast_to(t, x_t.shape[:-1])
        s = jnp.broadcast_to(s, x_t.shape[:-1])
        return sample_onehot(key, posterior(x_t, p_hat, t, s))

    def kl(onehot, x_t, p_hat, t):
        t = jnp.broadcast_to(t, x_t.shape[:-1])
        return _cat_kl(posterior(x_t, onehot, t, t - 1), posterior(x_t, p_hat, t, t - 1))

    def prior_kl(onehot):
        t = jnp.full(onehot.shape[:-1], len(alpha_bar) - 1)
        return _cat_kl(marginal(onehot, t), jnp.full(onehot.shape, 1.0 / d))

    return LabelProcess("d3pm", d, noise, prior, step, kl, prior_kl)
