"""Finite-sample quantities of a fitted model: the ridge path, C and L, exact or estimated.

For a linear model f(z) = zᵀθ on zero-mean data with x̃ an independent copy of x:

    C(θ) = Cov(f([x̃; y]), g) = θ_yᵀ E[yg]          (= θ_yᵀΣ_yxθ*_x when g = xᵀθ*_x + ε)
    L(θ) = E[(zᵀθ − g)²] = (θ − θ*)ᵀΣ(θ − θ*) + σ²  (well-specified labels)

`spurious_correlation` / `test_loss` evaluate these exactly from population moments;
`empirical_spurious_correlation` / `empirical_test_loss` estimate them on held-out samples
for any predictor (linear, random features), x̃ being x of another held-out sample.
float64 numpy throughout (see theory.py).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from scipy import linalg

from lib.spurious_ridge.theory import check_lambdas

_CUTOFF = 1e-12  # relative eigenvalue below which the Gram is treated as singular


class GramEig(NamedTuple):
    """Eigen-decomposition of the smaller Gram matrix of Z (n, D).

    primal (n >= D): evals of ZᵀZ/n (D,), evecs (D, D);
    dual   (n <  D): evals of ZZᵀ/n (n,), evecs (n, n).
    """
    evals: np.ndarray
    evecs: np.ndarray
    dual: bool


def gram_eig(z: np.ndarray) -> GramEig:
    """Eigen-decomposition of ZᵀZ/n or ZZᵀ/n, whichever is smaller. z: (n, D)."""
    z = np.asarray(z, dtype=np.float64)
    n, dim = z.shape
    dual = n < dim
    gram = (z @ z.T if dual else z.T @ z) / n
    evals, evecs = linalg.eigh(gram)
    return GramEig(np.clip(evals, 0.0, None), evecs, dual)


def _inverse(evals: np.ndarray, lams: np.ndarray) -> np.ndarray:
    """(L, r) entries 1/(e + λ), with 0 where e + λ is numerically 0 (pseudo-inverse)."""
    denom = evals[None, :] + lams[:, None]
    floor = _CUTOFF * max(float(evals.max(initial=0.0)), 1e-300)
    with np.errstate(divide="ignore"):
        return np.where(denom > floor, 1.0 / denom, 0.0)


def ridge_path(z: np.ndarray, g: np.ndarray, lams, eig: GramEig | None = None) -> np.ndarray:
    """θ̂(λ) = (ZᵀZ/n + λI)⁻¹ZᵀG/n for every λ; (L, D).

    Args: z (n, D), g (n,), lams scalar or (L,) >= 0; `eig` = gram_eig(z) to reuse.
    λ = 0 gives the minimum-norm least-squares solution Z⁺G (pseudo-inverse).
    """
    z, g = np.asarray(z, dtype=np.float64), np.asarray(g, dtype=np.float64)
    lams = check_lambdas(lams)
    eig = gram_eig(z) if eig is None else eig
    n = z.shape[0]
    inv = _inverse(eig.evals, lams)
    if eig.dual:   # θ = Zᵀ(ZZᵀ/n + λI)⁻¹G/n
        return ((inv * (eig.evecs.T @ g)[None, :]) @ eig.evecs.T) @ z / n
    return (inv * (eig.evecs.T @ (z.T @ g / n))[None, :]) @ eig.evecs.T


def ridge_noise_trace(z: np.ndarray, sigma: np.ndarray, lams, eig: GramEig | None = None
                      ) -> np.ndarray:
    """tr(Σ A_λ A_λᵀ) for θ̂ = A_λ G; (L,). Label noise ε adds σ²·this to E_ε[L(θ̂)] given Z.

    primal: A Aᵀ = V diag(e/(e+λ)²) Vᵀ / n;  dual: A Aᵀ = ZᵀV diag(1/(e+λ)²) VᵀZ / n².
    """
    z, sigma = np.asarray(z, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    lams = check_lambdas(lams)
    eig = gram_eig(z) if eig is None else eig
    n = z.shape[0]
    inv = _inverse(eig.evals, lams)
    if eig.dual:
        m = z.T @ eig.evecs                                         # (D, n)
        weights = np.sum(m * (sigma @ m), axis=0) / n ** 2
        return (inv ** 2) @ weights
    v = eig.evecs
    weights = np.sum(v * (sigma @ v), axis=0) * eig.evals / n
    return (inv ** 2) @ weights


# ----------------------------------------------------------------------------- exact, from moments


def spurious_correlation(thetas: np.ndarray, d_x: int, cov_yg: np.ndarray) -> np.ndarray:
    """C(θ) = θ_yᵀE[yg] for linear models; thetas (L, D) or (D,), cov_yg (d_y,) -> (L,) or ()."""
    thetas = np.asarray(thetas, dtype=np.float64)
    return thetas[..., d_x:] @ np.asarray(cov_yg, dtype=np.float64)


def test_loss(thetas: np.ndarray, sigma: np.ndarray, theta_star: np.ndarray,
              noise: float) -> np.ndarray:
    """L(θ) = (θ − θ*)ᵀΣ(θ − θ*) + σ²; thetas (L, D) or (D,), sigma (D, D), theta_star (D,)."""
    delta = np.asarray(thetas, dtype=np.float64) - np.asarray(theta_star, dtype=np.float64)
    return np.einsum("...i,ij,...j->...", delta, sigma, delta) + noise ** 2


# ----------------------------------------------------------------------------- estimated, on samples


def empirical_spurious_correlation(predict: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                                   y: np.ndarray, g: np.ndarray, rng: np.random.Generator,
                                   num_permutations: int = 1) -> np.ndarray:
    """Ĉ = sample Cov(f([x_π(i); y_i]), g_i), averaged over random permutations π.

    Args:
      predict: (m, D) -> (m,) or (m, K) (K models at once, e.g. a λ path).
      x (m, d_x), y (m, d_y), g (m,) held-out samples; the permutation makes x̃_i = x_π(i)
      independent of (y_i, g_i) up to O(1/m) (the empirical stand-in for an independent copy).
    Returns: () or (K,).
    """
    g = np.asarray(g, dtype=np.float64)
    gc = g - g.mean()
    total = 0.0
    for _ in range(num_permutations):
        pred = np.asarray(predict(np.concatenate([x[rng.permutation(len(x))], y], axis=1)))
        pred = pred - pred.mean(axis=0)
        total = total + np.tensordot(gc, pred, axes=(0, 0)) / (len(g) - 1)
    return total / num_permutations


def empirical_test_loss(pred: np.ndarray, g: np.ndarray) -> np.ndarray:
    """L̂ = mean (f(z_i) − g_i)²; pred (m,) or (m, K), g (m,) -> () or (K,)."""
    pred, g = np.asarray(pred, dtype=np.float64), np.asarray(g, dtype=np.float64)
    return np.mean((pred - (g if pred.ndim == 1 else g[:, None])) ** 2, axis=0)
