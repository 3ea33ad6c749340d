"""Tensor-product basis units with the sum-to-zero constraint (ANOVA-TPNN, eq. 5–6).

For a component S = (j_1, ..., j_o) the paper's basis unit is

    φ(x_S | b, γ) = ∏_{j∈S} [ 1 − σ(z_j) + c_j σ(z_j) ],   z_j = (x_j − b_j)/γ_j,
    c_j = −(1 − m_j)/m_j,   m_j = ∫ σ((x_j − b_j)/γ_j) dμ_{n,j}(x_j),

where μ_{n,j} is the empirical marginal of feature j on the training sample. Each 1-D
factor equals 1 + (c_j − 1)σ(z_j) = 1 − σ(z_j)/m_j, whose μ_{n,j}-mean is exactly
1 − m_j/m_j = 0; a product of such factors therefore integrates to zero over each of its
coordinates with the others held fixed (the identifiability condition, eq. 3–4). We store
m_j (the "constant"), not c_j: the two are the same information and m_j is the quantity
that is averaged.

Shapes: o = order of the components, C = number of components of that order, K = basis
units per component, n = rows.
    x_sel  (n, C, o)    features of each component, x[:, index]
    b, log_gamma (C, o, K)
    m      (C, o, K)    sigmoid mass per factor (the frozen "identifiability constant")
    units  (n, C, K)    φ for every unit
"""
from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

# m_j is clipped from below so that a threshold far outside the data cannot divide by ~0;
# with data-aware init and inputs in [-1, 1] it is never reached in practice (tests check
# that the clip is inactive whenever they check exact zero means).
MASS_FLOOR = 1e-6


def component_index(num_features: int, order: int) -> np.ndarray:
    """All components of one order as an int array (C, order), lexicographic
    (itertools.combinations); ValueError when the order exceeds the number of features."""
    if order < 1:
        raise ValueError(f"interaction order must be >= 1, got {order}")
    if order > num_features:
        raise ValueError(f"requested interaction order {order} exceeds the number of features "
                         f"{num_features}; use max_order <= {num_features}")
    return np.asarray(list(itertools.combinations(range(num_features), order)),
                      dtype=np.int32).reshape(-1, order)


def standardized(x_sel: jax.Array, b: jax.Array, log_gamma: jax.Array) -> jax.Array:
    """z = (x_j − b_j)/γ_j for every unit: (n, C, o) × (C, o, K) -> (n, C, o, K)."""
    return (x_sel[..., None] - b) * jnp.exp(-log_gamma)


def sigmoid_mass(x_sel: jax.Array, b: jax.Array, log_gamma: jax.Array,
                 weights: jax.Array | None = None) -> jax.Array:
    """m = Σ_i w_i σ(z_ij) / Σ_i w_i, the μ_{n,j}-integral of eq. 6 (weights = 1 gives the
    empirical measure; 0/1 weights give a resample's). Returns (C, o, K)."""
    s = jax.nn.sigmoid(standardized(x_sel, b, log_gamma))
    if weights is None:
        return jnp.mean(s, axis=0)
    w = weights / jnp.sum(weights)
    return jnp.einsum("n,ncok->cok", w, s)


def factors(x_sel: jax.Array, b: jax.Array, log_gamma: jax.Array, mass: jax.Array) -> jax.Array:
    """The centred 1-D factors 1 − σ(z)/m, (n, C, o, K); each has μ_{n,j}-mean 0 when `mass`
    was computed on μ_n."""
    s = jax.nn.sigmoid(standardized(x_sel, b, log_gamma))
    return 1.0 - s / jnp.maximum(mass, MASS_FLOOR)


def units(x_sel: jax.Array, b: jax.Array, log_gamma: jax.Array, mass: jax.Array) -> jax.Array:
    """Tensor-product units φ(x_S | b, γ) = ∏_j factor_j, (n, C, K). The product is an
    explicit chain of multiplications (cheaper to differentiate than jnp.prod)."""
    g = factors(x_sel, b, log_gamma, mass)
    out = g[:, :, 0]
    for a in range(1, g.shape[2]):
        out = out * g[:, :, a]
    return out


def data_aware_init(key: jax.Array, x_sorted: jax.Array, num_units: int
                    ) -> tuple[jax.Array, jax.Array]:
    """NODE-style init of (b, log γ) from data, each (C, o, K).

    b_j is the empirical quantile of x_j at a level q ~ Beta(1, 1) = U(0, 1), drawn per unit
    and coordinate; γ_j is the quantile of |x_j − b_j| at a second U(0.1, 0.9) level, so each
    sigmoid's transition spans a data-dependent fraction of the feature's range.
    x_sorted: (n, C, o) training rows of each component's features, every column sorted
    ascending (sort on the host: a sort of a constant inside jit is constant-folded slowly).
    """
    x_sorted = jnp.asarray(x_sorted)
    n, c, o = x_sorted.shape
    k1, k2 = jax.random.split(key)
    pos = jax.random.uniform(k1, (c, o, num_units)) * (n - 1)
    lo = jnp.floor(pos).astype(jnp.int32)
    hi = jnp.minimum(lo + 1, n - 1)
    frac = pos - lo
    cols = jnp.arange(c)[:, None, None], jnp.arange(o)[None, :, None]
    b = x_sorted[(lo,) + cols] * (1 - frac) + x_sorted[(hi,) + cols] * frac
    dist = jnp.sort(jnp.abs(x_sorted[..., None] - b), axis=0)      # (n, C, o, K)
    q2 = jax.random.uniform(k2, (c, o, num_units), minval=0.1, maxval=0.9)
    idx = jnp.round(q2 * (n - 1)).astype(jnp.int32)
    gamma = jnp.take_along_axis(dist, idx[None], axis=0)[0]
    return b, jnp.log(jnp.maximum(gamma, 1e-2))
