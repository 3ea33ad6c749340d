"""Gaussian mixtures with one shared isotropic std, factorised over groups of dimensions.

GMFlow's network outputs q(u | x_t) = Σ_k A_k N(u; μ_k, s² I) (paper Eq. 4). For images the
mixture is factorised pixel-wise (App. A / `GMOutput2D`): every pixel g has its own K
weights, shared by its C channels, and the std s is one scalar per sample. A 2-D point is
the case of one group (G = 1, C = 2). Shapes:

    means       (..., K, G, C)
    logweights  (..., K, G)   log-softmax over K
    logstd      (...,)        log s, one per sample

The same container holds velocity GMs and x₀ GMs; the family is closed under every
operation GMFlow needs (u→x₀, the GM-SDE transition Eq. 9, the GM-ODE conversion Eq. 10,
guidance), all of which are `gaussian_mask` products with an isotropic Gaussian factor.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

Array = jax.Array

# Paper code clamps 1/s <= 1e4 in the NLL (`gaussian_mixture_nll_loss`).
MIN_LOGSTD = math.log(1e-4)
# A point mass as a GM: s = e^-20 (used by CFG and the flow-matching baselines).
DIRAC_LOGSTD = -20.0


class GM(NamedTuple):
    """A K-component GM over (G, C)-shaped points with a shared isotropic std."""

    means: Array       # (..., K, G, C)
    logweights: Array  # (..., K, G), normalised over K
    logstd: Array      # (...,)

    @property
    def num_components(self) -> int:
        return self.means.shape[-3]

    @property
    def dim(self) -> int:
        """D = G · C, the dimension of one point."""
        return self.means.shape[-2] * self.means.shape[-1]


def make_gm(means: Array, logits: Array, logstd: Array) -> GM:
    """A GM from raw head outputs: `logits` (..., K, G) are log-softmax-normalised over K."""
    if means.ndim < 3 or logits.shape != means.shape[:-1] or logstd.shape != means.shape[:-3]:
        raise ValueError(f"GM shapes do not agree: means {means.shape} (..., K, G, C), "
                         f"logits {logits.shape} (..., K, G), logstd {logstd.shape} (...,)")
    return GM(means, jax.nn.log_softmax(logits, axis=-2), logstd)


def dirac(x: Array) -> GM:
    """A (numerically) point-mass GM at `x` (..., G, C): K = 1, s = e^-20."""
    return GM(x[..., None, :, :], jnp.zeros(x.shape[:-2] + (1, x.shape[-2]), x.dtype),
              jnp.full(x.shape[:-2], DIRAC_LOGSTD, x.dtype))


def _var(gm: GM) -> Array:
    return jnp.exp(2.0 * gm.logstd)


def log_prob(gm: GM, x: Array) -> Array:
    """log q(x) for x (..., G, C): Σ_g log Σ_k A_kg N(x_g; μ_kg, s² I_C) -> (...,).

    The std is clamped at 1e-4 as in the paper's `gaussian_mixture_nll_loss`.
    """
    c = gm.means.shape[-1]
    logstd = jnp.maximum(gm.logstd, MIN_LOGSTD)[..., None, None]
    d2 = jnp.sum((x[..., None, :, :] - gm.means) ** 2, axis=-1)          # (..., K, G)
    comp = gm.logweights - 0.5 * d2 * jnp.exp(-2.0 * logstd) - c * logstd \
        - 0.5 * c * math.log(2.0 * math.pi)
    return jnp.sum(jax.nn.logsumexp(comp, axis=-2), axis=-1)


def nll_per_dim(gm: GM, x: Array) -> Array:
    """The GM NLL of Eq. 6 divided by D = G·C (nats per dimension): (...,)."""
    return -log_prob(gm, x) / gm.dim


def weights(gm: GM) -> Array:
    """A_kg = softmax over K: (..., K, G)."""
    return jnp.exp(gm.logweights)


def mean(gm: GM) -> Array:
    """E[x] = Σ_k A_k μ_k per group: (..., G, C)."""
    return jnp.sum(weights(gm)[..., None] * gm.means, axis=-3)


def moment_match(gm: GM) -> tuple[Array, Array]:
    """Isotropic moment matching (App. A.1): mean (..., G, C) and the variance averaged over
    all D dimensions, (1/D) Σ_g Σ_k A_kg ‖μ_kg − m_g‖² + s²: (...,)."""
    m = mean(gm)
    spread = jnp.sum(weights(gm)[..., None] * (gm.means - m[..., None, :, :]) ** 2,
                     axis=(-3, -2, -1))
    return m, spread / gm.dim + _var(gm)


def sample(gm: GM, key: Array) -> Array:
    """One draw per sample: a component per group from A, then μ + s·z: (..., G, C)."""
    k_comp, k_noise = jax.random.split(key)
    comp = jax.random.categorical(k_comp, gm.logweights, axis=-2)        # (..., G)
    mu = jnp.take_along_axis(gm.means, comp[..., None, :, None], axis=-3)[..., 0, :, :]
    z = jax.random.normal(k_noise, mu.shape, mu.dtype)
    return mu + jnp.exp(gm.logstd)[..., None, None] * z


def gaussian_mask(gm: GM, precision: Array, h: Array) -> GM:
    """The GM times the isotropic Gaussian factor exp(−p‖x‖²/2 + h·x), renormalised.

    precision p (...,) (may be 0: a pure tilt), h (..., G, C) (= p·m for a factor N(m, 1/p)).
    Each component N(μ_k, s²) becomes N((μ_k + s² h)/(1 + s² p), s²/(1 + s² p)) and its
    log-weight gains (2 μ_k·h − p‖μ_k‖²)/(2(1 + s² p)) (the k-independent rest cancels).
    This is the product used by Eq. 10, by probabilistic guidance (App. A.1) and by the
    second-order solvers (App. A.2).
    """
    s2 = _var(gm)
    denom = 1.0 + s2 * precision                                           # (...,)
    d4 = denom[..., None, None, None]
    means = (gm.means + (s2[..., None, None, None] * h[..., None, :, :])) / d4
    gain = jnp.sum(2.0 * gm.means * h[..., None, :, :]
                   - precision[..., None, None, None] * gm.means ** 2, axis=-1)
    logw = jax.nn.log_softmax(gm.logweights + gain / (2.0 * denom[..., None, None]), axis=-2)
    return GM(means, logw, gm.logstd - 0.5 * jnp.log(denom))
