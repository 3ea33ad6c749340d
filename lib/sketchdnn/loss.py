"""Training loss (notes A.5) and the NLL bound in bits per sketch (notes A.7).

Loss, for t ~ U{1..T} per sketch and x_t ~ q(x_t | x₀):
    L = CE(flag) + CE(type) + w(t) · Σ mask·(p̂ − p)² / Σ mask,
    w(t) = low_t_weight (16 in the paper) if t ≤ low_t_max (150 of T = 2000) else 1.
CE terms, `ce_mean`: "slots" (the workspace's default) is the mean over sketches and slots of
−Σ_c onehot·log p̂; "slots_and_classes" (the official code's `.mean()` over every element)
also divides by the class count D (2 for the flag, 5 for the type). That is not a harmless
constant: it changes the weight of each label block against the parameter error (the
official loss weighs the type CE 5× and the flag CE 2× less than "slots"). The parameter
error uses the network's raw parameters on the true type's columns (`mask`).

NLL bound (a VDM-style ELBO, Kingma et al. 2021; the notebook of the paper keeps only the
middle term and uses a probability-space error for the labels): with parameters quantised to
`bins` levels on [−1, 1] (the paper deduplicates at 256 levels),
    −log₂ p(x₀) ≤ [ KL(q(x_T|x₀) || p(x_T))                                     prior
                   + (T − 1) · E_{t∼U{2..T}} KL(q(x_{t−1}|x_t,x₀) || p(x_{t−1}|x_t))  diffusion
                   + E −log p(x₀ | x_1) ] / ln 2                                  reconstruction
Gaussian blocks: KL_t = ½ (SNR(t−1) − SNR(t)) ‖u(x₀) − û‖² (u the block's embedding, the
logits log π₀ for Gaussian-Softmax); D3PM: categorical KLs (`baselines.py`). The decoder
p(x₀|x_1) takes p̂(flag), p̂(type) of the network at t = 1 and, for the true type's
parameters, a Gaussian N(x̂₀, (1−ᾱ_1)/ᾱ_1) integrated over the quantisation bin; the other
type's columns are 0 given the type. All terms are summed over the slots: bits per sketch.
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import log_ndtr

from lib.sketchdnn import sketch as sk
from lib.sketchdnn.diffusion import (
    LabelProcess,
    Process,
    gaussian_prior_kl,
    prediction,
    q_sample,
    snr,
    split,
)

LN2 = float(np.log(2.0))


def _ce(onehot: jax.Array, probs: jax.Array) -> jax.Array:
    return -jnp.sum(onehot * jnp.log(jnp.maximum(probs, 1e-12)), -1)


def param_mask(x0: jax.Array) -> jax.Array:
    """(…, S, 21) with one-hot types -> (…, S, 14) 0/1 mask of the active parameters."""
    return split(x0)[1] @ jnp.asarray(sk.TYPE_PARAM_MASK)


CE_MEANS = ("slots", "slots_and_classes")


def training_loss(process: Process, denoise: Callable, x0: jax.Array, key, *,
                  low_t_max: int, low_t_weight: float,
                  ce_mean: str = "slots") -> tuple[jax.Array, dict]:
    """denoise(x_t (B,S,21), t (B,)) -> raw (B,S,21); x₀ clean (B,S,21). (loss, metrics).

    ce_mean: "slots" or "slots_and_classes" (the official normalisation; module docstring).
    """
    if ce_mean not in CE_MEANS:
        raise ValueError(f"ce_mean must be one of {CE_MEANS}, got {ce_mean!r}")
    kt, kq = jax.random.split(key)
    b = x0.shape[0]
    t = jax.random.randint(kt, (b,), 1, process.num_steps + 1)
    raw = denoise(q_sample(process, kq, x0, t), t)
    f0, y0, p0 = split(x0)
    fl, tl, pp = split(raw)
    ce_flag = jnp.mean(_ce(f0, jax.nn.softmax(fl, -1)))
    ce_type = jnp.mean(_ce(y0, jax.nn.softmax(tl, -1)))
    if ce_mean == "slots_and_classes":
        ce_flag, ce_type = ce_flag / f0.shape[-1], ce_type / y0.shape[-1]
    mask = param_mask(x0)
    w = jnp.where(t <= low_t_max, low_t_weight, 1.0)[:, None, None]
    mse = jnp.sum(w * mask * (pp - p0) ** 2) / jnp.maximum(jnp.sum(mask), 1.0)
    loss = ce_flag + ce_type + mse
    return loss, {"ce_flag": ce_flag, "ce_type": ce_type, "mse": mse}


def quantize(params: jax.Array, mask: jax.Array, bins: int) -> jax.Array:
    """Active parameters to the centre of their bin of width 2/bins; inactive stay 0."""
    delta = 2.0 / bins
    q = (jnp.floor((params + 1) / delta) + 0.5) * delta - 1
    return jnp.where(mask > 0, q, 0.0)


def _log_diff_ndtr(a: jax.Array, b: jax.Array) -> jax.Array:
    """log(Φ(a) − Φ(b)) for a > b, stable in both tails."""
    flip = (a + b) / 2 > 0
    hi, lo = jnp.where(flip, -b, a), jnp.where(flip, -a, b)
    la, lb = log_ndtr(hi), log_ndtr(lo)
    return la + jnp.log(-jnp.expm1(jnp.minimum(lb - la, -1e-30)))


def discretized_gaussian_log_prob(x: jax.Array, mean: jax.Array, std, bins: int) -> jax.Array:
    """log ∫_{bin of x} N(·; mean, std²), bins of width 2/bins centred at x."""
    half = 1.0 / bins
    return _log_diff_ndtr((x + half - mean) / std, (x - half - mean) / std)


def label_bound(block: LabelProcess, num_steps: int, onehot: jax.Array, probs_fn: Callable,
                key, t: jax.Array) -> dict:
    """The three bound terms (nats, shape onehot.shape[:-1]) of one discrete block alone.

    probs_fn(x_t, t) -> p̂(x₀ | x_t); t (…,) ints in 2..T (one diffusion term per example).
    Used by the tests with the exact posterior of a known label distribution.
    """
    k1, k2 = jax.random.split(key)
    x_t = block.noise(k1, onehot, t)
    diffusion = (num_steps - 1) * block.kl(onehot, x_t, probs_fn(x_t, t), t)
    one = jnp.ones_like(t)
    x_1 = block.noise(k2, onehot, one)
    recon = _ce(onehot, probs_fn(x_1, one))
    return {"prior": block.prior_kl(onehot), "diffusion": diffusion, "reconstruction": recon}


def nll_bound(process: Process, denoise: Callable, x0: jax.Array, key, *,
              bins: int = 256) -> dict:
    """Per-sketch bound terms in bits, each (B,), plus 'total' (one t per sketch)."""
    T = process.num_steps
    b = x0.shape[0]
    kt, kq, k1 = jax.random.split(key, 3)
    f0, y0, p0 = split(x0)
    mask = param_mask(x0)
    p0 = quantize(p0, mask, bins)
    x0q = jnp.concatenate([f0, y0, p0], -1)
    ab = np.asarray(process.alpha_bar, np.float64)
    snr_c = jnp.asarray(snr(ab), jnp.float32)

    t = jax.random.randint(kt, (b,), 2, T + 1)
    x_t = q_sample(process, kq, x0q, t)
    ones = jnp.ones((b,), jnp.int32)
    x_1 = q_sample(process, k1, x0q, ones)
    # one network call on both batches (keeps the compiled program small)
    pf_all, pt_all, pp_all = prediction(denoise(jnp.concatenate([x_t, x_1]),
                                                jnp.concatenate([t, ones])))
    pf, pt, pp = pf_all[:b], pt_all[:b], pp_all[:b]
    pf1, pt1, pp1 = pf_all[b:], pt_all[b:], pp_all[b:]
    ft, yt, _ = split(x_t)
    tt = t[:, None]
    diff_params = 0.5 * (snr_c[tt - 1] - snr_c[tt]) * jnp.sum((p0 - pp) ** 2, -1)
    diffusion = (T - 1) * (process.flag.kl(f0, ft, pf, tt) + process.type.kl(y0, yt, pt, tt)
                           + diff_params)

    std1 = float(np.sqrt((1 - ab[1]) / ab[1]))
    recon_params = -jnp.sum(mask * discretized_gaussian_log_prob(p0, pp1, std1, bins), -1)
    recon = _ce(f0, pf1) + _ce(y0, pt1) + recon_params

    prior = (process.flag.prior_kl(f0) + process.type.prior_kl(y0)
             + gaussian_prior_kl(float(ab[-1]), p0))
    out = {"prior": prior, "diffusion": diffusion, "reconstruction": recon,
           "reconstruction_params": recon_params}
    out = {k: jnp.sum(v, -1) / LN2 for k, v in out.items()}
    out["total"] = out["prior"] + out["diffusion"] + out["reconstruction"]
    return out
