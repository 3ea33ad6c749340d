"""Semi-synthetic treatment/outcome designs on real images with a known ATE.

Each replication draws n images without replacement from the causal pool, then the
treatment D and the outcome Y from a known model (the paper's designs, notes §A):

  label    C = 1{class ∈ label_classes} (a binary image label; pneumonia / sentiment in the
           paper).  P(D = 1 | C) = p1 if C else p0 (0.7 / 0.3),  Y = θD + γC + ε.
  complex  C = U ∈ R^q, the standardised code of an autoencoder on the pre-trained
           features (a nonlinear function of the latent).  D ~ Bernoulli(σ(s_a · U·γ_A)),
           Y = θD + s_y · U·γ_Y + ε, with γ_A ~ N(0, I_q)/√q and γ_Y ~ U(−1, 0)^q drawn once
           from `coef_seed` (the paper draws γ_A ~ N(0,1)^5 unscaled on an unstandardised U;
           we standardise U and divide by √q so that s_a sets the logit's scale, i.e. the
           overlap).

ε ~ N(0, noise²). θ (= the ATE, constant effect) is known; the oracle adjusts for C.
All functions are pure JAX and vmapped over replications by `replicate`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

SETTINGS = ("label", "complex")
# a setting's replications draw from fold_in(key, SETTING_STREAM + its index in SETTINGS)
SETTING_STREAM = 1000


class Replications(NamedTuple):
    idx: jax.Array         # (R, n) rows of the pool
    y: jax.Array           # (R, n)
    d: jax.Array           # (R, n) in {0, 1}
    propensity: jax.Array  # (R, n) true P(D = 1 | C)
    g: jax.Array           # (R, n) true E[Y | D = 0, C] = E[Y − θD | C] (γC or s_y·U·γ_Y)


def binary_label(labels: np.ndarray, classes: Sequence[int]) -> np.ndarray:
    """(N,) float32: 1 where the class label is in `classes`."""
    return np.isin(labels, np.asarray(classes)).astype(np.float32)


def complex_coefficients(q: int, coef_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(γ_A (q,) ~ N(0, 1)/√q, γ_Y (q,) ~ U(−1, 0)), drawn once from coef_seed."""
    rng = np.random.default_rng(coef_seed)
    return (rng.normal(size=q) / np.sqrt(q)).astype(np.float32), \
        rng.uniform(-1.0, 0.0, size=q).astype(np.float32)


def sample_rows(key, pool_size: int, n: int) -> jax.Array:
    """(n,) distinct rows of a pool of pool_size, uniformly at random."""
    return jax.random.permutation(key, pool_size)[:n]


def label_outcome(key, c, theta: float, gamma: float, p1: float, p0: float, noise: float):
    """(y, d, propensity, g) of the label design for confounder c (n,) in {0, 1};
    g = γC is the outcome's confounding term."""
    k_d, k_e = jax.random.split(key)
    prop = jnp.where(c > 0.5, p1, p0)
    d = (jax.random.uniform(k_d, c.shape) < prop).astype(jnp.float32)
    g = gamma * c
    y = theta * d + g + noise * jax.random.normal(k_e, c.shape)
    return y, d, prop, g


def complex_outcome(key, u, theta: float, gamma_a, gamma_y, logit_scale: float,
                    outcome_scale: float, noise: float):
    """(y, d, propensity, g) of the complex design for u (n, q); g = s_y·U·γ_Y."""
    k_d, k_e = jax.random.split(key)
    prop = jax.nn.sigmoid(logit_scale * (u @ gamma_a))
    d = (jax.random.uniform(k_d, prop.shape) < prop).astype(jnp.float32)
    g = outcome_scale * (u @ gamma_y)
    y = theta * d + g + noise * jax.random.normal(k_e, prop.shape)
    return y, d, prop, g


def replicate(key, confounder: np.ndarray, setting: str, n: int, reps: int, sim) -> Replications:
    """Draw `reps` replications of size n from the pool whose confounder is `confounder`
    ((N,) label or (N, q) code); `sim` holds theta, noise and the setting's parameters."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    c_all = jnp.asarray(confounder)
    if n > c_all.shape[0]:
        raise ValueError(f"n = {n} exceeds the causal pool of {c_all.shape[0]} images")
    if setting == "complex":
        gamma_a, gamma_y = (jnp.asarray(g) for g in
                            complex_coefficients(c_all.shape[1], sim.coef_seed))

    def one(k):
        k_rows, k_out = jax.random.split(k)
        idx = sample_rows(k_rows, c_all.shape[0], n)
        c = c_all[idx]
        if setting == "label":
            y, d, prop, g = label_outcome(k_out, c, sim.theta, sim.gamma, sim.p1, sim.p0,
                                          sim.noise)
        else:
            y, d, prop, g = complex_outcome(k_out, c, sim.theta, gamma_a, gamma_y,
                                            sim.logit_scale, sim.outcome_scale, sim.noise)
        return idx, y, d, prop, g

    return Replications(*jax.jit(jax.vmap(one))(jax.random.split(key, reps)))


def naive_limit_label(prevalence: float, theta: float, gamma: float, p1: float, p0: float):
    """Population limit of the naive difference in the label design:
    θ + γ (P(C=1 | D=1) − P(C=1 | D=0)) (the notes' sanity value)."""
    pi = prevalence
    c_d1 = p1 * pi / (p1 * pi + p0 * (1 - pi))
    c_d0 = (1 - p1) * pi / ((1 - p1) * pi + (1 - p0) * (1 - pi))
    return theta + gamma * (c_d1 - c_d0)
