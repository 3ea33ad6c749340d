"""Random-features ridge regression and its equivalent regularised linear model.

Model (p features, D inputs, W ∈ R^{p×D} with i.i.d. N(0, 1) entries):

    φ(z) = φ(W z / √D) / √p ∈ R^p,   f(z) = aᵀφ(z),
    â(λ) = argmin_a ‖Φa − G‖²/n + λ‖a‖²   (Φ = φ(Z), (n, p); `estimates.ridge_path`).

Hermite coefficients of φ at the pre-activation variance v = tr Σ / D:
μ₀ = E φ(√v G), μ₁ = E[φ(√v G) G], μ*² = E φ(√v G)² − μ₀² − μ₁², G ~ N(0, 1).

Equivalence (Gaussian-equivalent features; Jacot et al. 2020 for finite p). For odd φ
(μ₀ = 0) the feature kernel is K = ΦΦᵀ → μ₁² ZZᵀ / tr Σ + μ*² I as p → ∞, and the
average over W of the RF predictor equals kernel ridge with K and an effective ridge λ_K,

    λ = λ_K (1 − tr[K (K + nλ_K I)⁻¹] / p),                 (λ_K = λ when p → ∞)

which is linear ridge on z with

    λ̃ = (tr Σ / μ₁²) (λ_K + μ*² / n).

C is linear in the predictor, so C(RF, λ) ≈ C(linear ridge, λ̃) ≈ C^Σ(λ̃) at every width p;
L also carries the variance over W, so L(RF) → L^Σ(λ̃) only as p/n → ∞ (checked in the
experiment). Constants follow our normalisation; the paper's may differ by the factors
D and n (README: "where we differ").
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.polynomial import hermite_e
from scipy import special

from lib.spurious_ridge.theory import effective_regularization

# The random features' nonlinearities φ, in numpy (the Hermite quadrature below needs erf and
# the identity; the networks' activations are lib.nn.mlp.ACTIVATIONS).
RF_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "erf": special.erf,
    "linear": lambda t: t,
}
_NODES, _WEIGHTS = hermite_e.hermegauss(101)
_WEIGHTS = _WEIGHTS / np.sqrt(2.0 * np.pi)   # E[h(G)] = Σ_q w_q h(t_q)


def activation_fn(name: str) -> Callable[[np.ndarray], np.ndarray]:
    if name not in RF_ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; allowed: {sorted(RF_ACTIVATIONS)}")
    return RF_ACTIVATIONS[name]


def hermite_coefficients(activation: str, variance: float = 1.0) -> tuple[float, float, float]:
    """(μ₀, μ₁, μ*) of φ(√v G) by 101-point Gauss–Hermite quadrature."""
    if variance <= 0:
        raise ValueError(f"the pre-activation variance must be > 0; got {variance}")
    vals = activation_fn(activation)(np.sqrt(variance) * _NODES)
    mu0, mu1, second = _WEIGHTS @ vals, _WEIGHTS @ (vals * _NODES), _WEIGHTS @ vals ** 2
    return float(mu0), float(mu1), float(np.sqrt(max(second - mu0 ** 2 - mu1 ** 2, 0.0)))


def draw_weights(rng: np.random.Generator, p: int, dim: int) -> np.ndarray:
    """W (p, D) with i.i.d. N(0, 1) entries."""
    return rng.standard_normal((p, dim))


def features(z: np.ndarray, w: np.ndarray, activation: str) -> np.ndarray:
    """Φ = φ(Z Wᵀ / √D) / √p; z (m, D), w (p, D) -> (m, p)."""
    p, dim = w.shape
    return activation_fn(activation)(z @ w.T / np.sqrt(dim)) / np.sqrt(p)


def rf_spurious_correlation(a: np.ndarray, w: np.ndarray, sigma: np.ndarray, d_x: int,
                            cov_yg: np.ndarray, activation: str) -> np.ndarray:
    """Exact C of RF models on Gaussian data, by Stein's lemma (no Monte Carlo).

    With z̃ = [x̃; y] ~ N(0, blockdiag(Σ_xx, Σ_yy)) and s_k = w_kᵀz̃/√D ~ N(0, v_k),
    E[φ(s_k) g] = E[φ'(s_k)] Cov(s_k, g) = E[φ(s_k) s_k]/v_k · w_{k,y}ᵀE[yg]/√D, so

        C(a) = Σ_k a_k/√p · E[φ(s_k)s_k]/v_k · w_{k,y}ᵀE[yg]/√D.

    Args: a (L, p) or (p,), w (p, D), sigma (D, D), cov_yg = E[yg] (d_y,). Returns (L,) or ().
    """
    p, dim = w.shape
    wx, wy = w[:, :d_x], w[:, d_x:]
    v = (np.sum((wx @ sigma[:d_x, :d_x]) * wx, axis=1)
         + np.sum((wy @ sigma[d_x:, d_x:]) * wy, axis=1)) / dim
    v = np.maximum(v, 1e-300)
    vals = activation_fn(activation)(np.sqrt(v)[:, None] * _NODES[None, :])
    slope = (vals @ (_WEIGHTS * _NODES)) / np.sqrt(v)             # E[φ(s)s]/v = E[φ(√v G)G]/√v
    per_feature = slope * (wy @ np.asarray(cov_yg, dtype=np.float64)) / np.sqrt(dim * p)
    return np.asarray(a, dtype=np.float64) @ per_feature


def equivalent_ridge(lams, p: int, gram_evals: np.ndarray, n: int, dim: int, trace: float,
                     activation: str) -> tuple[np.ndarray, np.ndarray]:
    """(λ_K, λ̃) for RF ridge with p features at penalties `lams` (L,); each (L,).

    Args:
      gram_evals: eigenvalues of ZZᵀ/n or ZᵀZ/n (`estimates.gram_eig(z).evals`); the
        missing zero eigenvalues of the n×n Gram are added back.
      dim: D; trace: tr Σ (for data with unknown Σ, the mean squared norm of the
        training inputs). The Hermite coefficients are taken at variance v = trace / D.
    The kernel eigenvalues are κ_i = μ₁² n e_i / tr Σ + μ*²; λ_K solves the fixed point of
    the module docstring (`theory.effective_regularization` with eigenvalues κ/n and p in
    place of n).
    """
    _, mu1, mustar = hermite_coefficients(activation, trace / dim)
    evals = np.concatenate([np.asarray(gram_evals, np.float64),
                            np.zeros(max(0, n - len(gram_evals)))])
    kappa = mu1 ** 2 * n * evals / trace + mustar ** 2
    lam_k = effective_regularization(kappa / n, lams, p)
    return lam_k, trace / mu1 ** 2 * (lam_k + mustar ** 2 / n)
