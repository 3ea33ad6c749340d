"""Probabilistic guidance (paper Eq. 8, App. A.1) and classifier-free guidance, on x₀ GMs.

Both map (conditional GM, unconditional GM) at the same (x_t, t) to one x₀ GM, so any GM
sampler in `samplers.py` runs either of them (`guided_denoiser`).

Probabilistic guidance with strength w̃ ∈ [0, 1):
  1. moment-match the conditional GM to N(μ_c, s_c² I) (s_c² averaged over dimensions) and
     the unconditional one to μ_u;
  2. Δ = μ_c − μ_u, optionally made orthogonal to μ_c (Sadat et al. 2025; `orthogonal`);
  3. bias = Δ rescaled to per-dimension power w̃² s_c²;
  4. target N(μ_c + bias, (1 − w̃²) s_c² I); the conditional GM is multiplied by
     target / N(μ_c, s_c²) (`apply_bias`), keeping its K components.
Classifier-free guidance with scale w ≥ 0 returns a point mass at μ_c + (w − 1) Δ
(= μ_u + w Δ without the projection); w = 1 is the conditional model.
"""
from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from lib.gmflow import mixture
from lib.gmflow.mixture import GM

Array = jax.Array
KINDS = ("none", "probabilistic", "cfg")


def check_scale(kind: str, w: float) -> None:
    """ValueError naming the range when a guidance strength is outside it (before compute).

    A traced `w` (inside jit) is not checked here; check the Python values first."""
    if kind not in KINDS:
        raise ValueError(f"unknown guidance kind {kind!r}; known: {KINDS}")
    if not isinstance(w, (int, float)):
        return
    if kind == "probabilistic" and not 0.0 <= w < 1.0:
        raise ValueError(f"probabilistic guidance strength w̃ must be in [0, 1), got {w}")
    if kind == "cfg" and w < 0.0:
        raise ValueError(f"classifier-free guidance scale w must be >= 0, got {w}")


def _power(x: Array) -> Array:
    """Mean square over the (G, C) dims: (...,)."""
    return jnp.mean(x ** 2, axis=(-2, -1))


def orthogonalise(delta: Array, ref: Array, amount: float = 1.0) -> Array:
    """Remove `amount` of delta's component along ref (per sample, over all dims)."""
    coef = jnp.sum(delta * ref, axis=(-2, -1)) / jnp.maximum(jnp.sum(ref ** 2, axis=(-2, -1)),
                                                             1e-12)
    return delta - amount * coef[..., None, None] * ref


def apply_bias(gm: GM, base_mean: Array, base_var: Array, bias: Array) -> GM:
    """Reweight `gm` by N(base_mean + b, v_t) / N(base_mean, base_var) (Gaussian masks).

    b is `bias` clipped to per-dimension power ≤ base_var, and v_t = base_var − power(b)
    (≥ 1e-6 base_var), so the target keeps the base's second moment. Used by probabilistic
    guidance and by the second-order solvers (App. A.2).
    """
    base_var = jnp.maximum(base_var, 1e-12)
    power = _power(bias)
    bias = bias * jnp.sqrt(jnp.minimum(base_var / jnp.maximum(power, 1e-12), 1.0))[..., None, None]
    power = jnp.minimum(power, base_var)
    target_var = base_var * jnp.maximum(1.0 - power / base_var, 1e-6)
    precision = 1.0 / target_var - 1.0 / base_var
    h = precision[..., None, None] * base_mean + bias / target_var[..., None, None]
    return mixture.gaussian_mask(gm, precision, h)


def probabilistic_guidance(cond: GM, uncond: GM, w: float | Array, orthogonal: float = 1.0) -> GM:
    """Probabilistic guidance (Eq. 8) of strength w̃ ∈ [0, 1) on x₀ GMs; see module doc."""
    mu_c, var_c = mixture.moment_match(cond)
    mu_u = mixture.mean(uncond)
    delta = orthogonalise(mu_c - mu_u, mu_c, orthogonal)
    scale = jnp.sqrt(w ** 2 * var_c / jnp.maximum(_power(delta), 1e-12))
    return apply_bias(cond, mu_c, var_c, delta * scale[..., None, None])


def classifier_free_guidance(cond: GM, uncond: GM, w: float | Array,
                             orthogonal: float = 0.0) -> GM:
    """CFG on the GM means: a point mass at μ_c + (w − 1)·Δ (Δ optionally orthogonalised)."""
    mu_c, mu_u = mixture.mean(cond), mixture.mean(uncond)
    delta = orthogonalise(mu_c - mu_u, mu_c, orthogonal)
    return mixture.dirac(mu_c + (w - 1.0) * delta)


def guided_denoiser(x0_fn: Callable[[Array, Array, Array], GM], labels: Array, null_label: int,
                    kind: str, w: float, orthogonal: float = 1.0) -> Callable[[Array, Array], GM]:
    """A sampler's `denoise(x, t) -> x₀ GM` from a class-conditional `x0_fn(x, t, labels)`.

    kind 'none' uses the conditional GM; 'probabilistic' and 'cfg' evaluate the conditional
    and the unconditional (label `null_label`) model in one batched call.
    """
    check_scale(kind, w)
    if kind == "none":
        return lambda x, t: x0_fn(x, t, labels)

    def denoise(x, t):
        n = x.shape[0]
        both = x0_fn(jnp.concatenate([x, x]), t,
                     jnp.concatenate([labels, jnp.full_like(labels, null_label)]))
        cond = jax.tree.map(lambda a: a[:n], both)
        uncond = jax.tree.map(lambda a: a[n:], both)
        if kind == "probabilistic":
            return probabilistic_guidance(cond, uncond, w, orthogonal)
        return classifier_free_guidance(cond, uncond, w, orthogonal)

    return denoise
