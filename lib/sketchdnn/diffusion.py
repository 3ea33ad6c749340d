"""Gaussian-Softmax diffusion (notes A.3, A.6): schedules, forward process, reverse steps.

A sketch is x₀ ∈ R^{S×21} (`sketch.py`): two discrete blocks (construction flag, D = 2;
type, D = 5) and 14 continuous parameters per slot. All slots are noised independently,
so the process is permutation-equivariant.

Schedules (notes A.3):
    ᾱ_t = clip(cos²(π/2 · t/T), 1e-4, 0.9999),  t = 0..T                       (cosine)
    k = ᾱ_1 (the one-hot smoothing constant)
    discrete: a = √ᾱ_t, n = log²((1−a)/((D−1)a+1)), m = log²((1−k)/((D−1)k+1)),
              ᾱᵈ_t = n / (n + m)                          ("variance schedule augmentation")
Continuous parameters (DDPM):   p_t = √ᾱ_t p₀ + √(1−ᾱ_t) ε.
Discrete blocks (Gaussian-Softmax): with the label embedding u(y) = log π₀(y),
    π₀ = k·onehot(y) + (1−k)/D,   l_t = √ᾱᵈ_t u(y) + √(1−ᾱᵈ_t) ε,   x_t = softmax(l_t),
so x_t lives on the simplex and labels can be blended. The reverse step is the DDPM
posterior applied in log space (softmax is blind to a per-slot constant, so log x_t stands in
for l_t exactly) and mapped back with a softmax. x̂₀'s logit is, by `x0_logits`, the posterior-mean embedding
û = Σ_y p̂(y) u(y) ("embedding_mean", the default) or the official code's 2·log p̂
("two_log_p", an unexplained factor the notes flag); the NLL bound of `loss.py` uses the same
x̂₀, so it is the bound of the sampler that is run.

`LabelProcess` is the interface shared with the baselines (`baselines.py`): one-hot
Gaussian and D3PM-style label diffusion.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from lib.sketchdnn import baselines
from lib.sketchdnn import sketch as sk
from lib.sketchdnn.label_process import (  # noqa: F401  (re-exported)
    LabelProcess, _gather, gaussian_label_process, gaussian_posterior, gaussian_prior_kl, snr)

Array = jax.Array
ALPHA_MIN, ALPHA_MAX = 1e-4, 0.9999


def cosine_alpha_bar(num_steps: int) -> np.ndarray:
    """(T+1,) float64 ᾱ_t = clip(cos²(π/2 · t/T), 1e-4, 0.9999) for t = 0..T."""
    if num_steps < 2:
        raise ValueError(f"need at least 2 diffusion steps, got {num_steps}")
    t = np.arange(num_steps + 1) / num_steps
    return np.clip(np.cos(np.pi / 2 * t) ** 2, ALPHA_MIN, ALPHA_MAX)


def discrete_alpha_bar(alpha_bar: np.ndarray, num_classes: int, k: float) -> np.ndarray:
    """ᾱᵈ_t = n/(n+m) of the module docstring (float64, same shape as alpha_bar).

    The logit-space SNR ᾱᵈ m/(1−ᾱᵈ) then equals n, the squared log-odds of the categorical
    that mixes onehot and uniform at rate √ᾱ_t.
    """
    d = num_classes
    a = np.sqrt(np.asarray(alpha_bar, np.float64))
    n = np.log((1 - a) / ((d - 1) * a + 1)) ** 2
    m = np.log((1 - k) / ((d - 1) * k + 1)) ** 2
    return n / (n + m)


def gaussian_softmax_process(num_classes: int, alpha_bar: np.ndarray,
                             x0_logits: str = "embedding_mean") -> LabelProcess:
    """The paper's Gaussian-Softmax process for a block of `num_classes` labels;
    x0_logits: "embedding_mean" or "two_log_p" (module docstring)."""
    k = float(alpha_bar[1])
    lo = float(np.log((1 - k) / num_classes))
    hi = float(np.log(k + (1 - k) / num_classes))
    ab_d = discrete_alpha_bar(alpha_bar, num_classes, k)
    return gaussian_label_process("gaussian_softmax", num_classes, ab_d, lo, hi, simplex=True,
                                  x0_logits=x0_logits)


def gaussian_softmax(logits_clean: Array, scale: float, key) -> Array:
    """softmax(√(1−σ²)·logits + σ ε) for noise level σ = scale ∈ [0, 1] (test helper)."""
    eps = jax.random.normal(key, logits_clean.shape)
    return jax.nn.softmax(jnp.sqrt(1 - scale ** 2) * logits_clean + scale * eps, -1)


# ----------------------------------------------------------------------------- joint process


class Process(NamedTuple):
    """The joint process: continuous DDPM on parameters + one LabelProcess per block."""
    kind: str
    alpha_bar: np.ndarray          # (T+1,) continuous schedule
    flag: LabelProcess
    type: LabelProcess

    @property
    def num_steps(self) -> int:
        return len(self.alpha_bar) - 1


def split(x: Array) -> tuple[Array, Array, Array]:
    return x[..., sk.FLAG_SLICE], x[..., sk.TYPE_SLICE], x[..., sk.PARAM_SLICE]


def join(flag: Array, typ: Array, params: Array) -> Array:
    return jnp.concatenate([flag, typ, params], -1)


def soft_mask_params(params: Array, type_probs: Array) -> Array:
    """Scale each type's parameter columns by p̂(type)/max p̂ (notes A.6): (..., S, 14)."""
    w = type_probs / jnp.max(type_probs, -1, keepdims=True)
    return params * (w @ jnp.asarray(sk.TYPE_PARAM_MASK))


def q_sample(process: Process, key, x0: Array, t: Array) -> Array:
    """x₀ (B, S, 21) with one-hot blocks, t (B,) ints in 1..T -> network input x_t."""
    kf, kt, kp = jax.random.split(key, 3)
    f0, y0, p0 = split(x0)
    tt = t[:, None]
    a = _gather(jnp.asarray(process.alpha_bar, jnp.float32), tt, p0.ndim)
    p_t = jnp.sqrt(a) * p0 + jnp.sqrt(1 - a) * jax.random.normal(kp, p0.shape)
    return join(process.flag.noise(kf, f0, tt), process.type.noise(kt, y0, tt), p_t)


def prediction(raw: Array) -> tuple[Array, Array, Array]:
    """Network output (…, S, 21) -> (p̂ flag, p̂ type, soft-masked parameters x̂₀)."""
    fl, tl, pp = split(raw)
    pf, pt = jax.nn.softmax(fl, -1), jax.nn.softmax(tl, -1)
    return pf, pt, soft_mask_params(pp, pt)


def sampling_times(num_steps: int, sample_steps: int) -> np.ndarray:
    """Decreasing int32 times T = τ_K > … > τ_1 ≥ 1 (K = sample_steps, evenly spaced)."""
    if not 1 <= sample_steps <= num_steps:
        raise ValueError(f"sample_steps must be in 1..{num_steps}, got {sample_steps}")
    return np.unique(np.round(np.linspace(1, num_steps, sample_steps)).astype(np.int32))[::-1]


def sample(process: Process, denoise: Callable, key, num: int, num_slots: int,
           sample_steps: int) -> Array:
    """Ancestral sampling (notes A.6) -> x̂₀ (num, S, 21): probabilities + parameters.

    denoise(x_t (B, S, 21), t (B,)) -> raw network output (B, S, 21). Steps run over
    `sampling_times`; each applies the DDPM posterior to the soft-masked parameters and the
    block's own reverse step to the labels; the last step returns x̂₀.
    """
    times = sampling_times(process.num_steps, sample_steps)
    ab = jnp.asarray(process.alpha_bar, jnp.float32)
    k0, k1, k2, kloop = jax.random.split(key, 4)
    shape = (num, num_slots)
    x = join(process.flag.prior(k0, shape), process.type.prior(k1, shape),
             jax.random.normal(k2, shape + (sk.NUM_PARAMS,)))
    # (t, s) pairs; the last pair's s = 0 is a placeholder: that step returns x̂₀ instead
    # (one network call in the scan body keeps the compiled program small)
    pairs = np.stack([times, np.append(times[1:], 0)], 1).astype(np.int32)

    def body(x, inp):
        (t, s), k = inp
        tb = jnp.full((num,), t, jnp.int32)
        pf, pt, pp = prediction(denoise(x, tb))
        f_t, y_t, p_t = split(x)
        kf, ky, kp = jax.random.split(k, 3)
        ts, ss = jnp.full((num, 1), t), jnp.full((num, 1), jnp.maximum(s, 1))
        mean, std = gaussian_posterior(ab, p_t, pp, ts, ss)
        x_new = join(process.flag.step(kf, f_t, pf, ts, ss), process.type.step(ky, y_t, pt, ts, ss),
                     mean + std * jax.random.normal(kp, p_t.shape))
        return jnp.where(s == 0, join(pf, pt, pp), x_new), None

    # keys of the K − 1 noisy steps; the last step draws nothing (its key is never used)
    keys = jnp.concatenate([jax.random.split(kloop, len(pairs) - 1), kloop[None]])
    x, _ = jax.lax.scan(body, x, (jnp.asarray(pairs), keys))
    return x


def make_process(kind: str, num_steps: int, x0_logits: str = "embedding_mean") -> Process:
    """kind: gaussian_softmax (the paper), onehot_gaussian or d3pm (`baselines.py`).
    x0_logits applies to gaussian_softmax only (the baselines have their own x̂₀)."""
    ab = cosine_alpha_bar(num_steps)
    if kind == "gaussian_softmax":
        def make(d, a):
            return gaussian_softmax_process(d, a, x0_logits)
    elif kind == "onehot_gaussian":
        make = baselines.onehot_gaussian_process
    elif kind == "d3pm":
        make = baselines.d3pm_process
    else:
        raise ValueError(f"unknown process {kind!r}; expected one of {PROCESSES}")
    return Process(kind, ab, make(sk.NUM_FLAGS, ab), make(sk.NUM_TYPES, ab))


PROCESSES = ("gaussian_softmax", "onehot_gaussian", "d3pm")
