"""Deterministic equivalents of ridge regression with a core block x and a spurious block y.

Notation (Bombari & Mondelli, ICML 2025; the paper's equation numbers are not available
to us, see experiments/spurious_ridge/README.md): z = [x; y] ∈ R^D, D = d_x + d_y,
zero mean, covariance

    Σ = [[Σ_xx, Σ_xy], [Σ_yx, Σ_yy]],

label g = xᵀθ*_x + ε with Var ε = σ², θ* = [θ*_x; 0]. Ridge on n samples:
θ̂(λ) = (ZᵀZ/n + λI)⁻¹ ZᵀG/n.

- effective regularisation τ(λ): the root of λ = τ (1 − tr[Σ(Σ+τI)⁻¹]/n);
- deterministic parameter θ̄(τ) = (Σ+τI)⁻¹ E[zg] (= (Σ+τI)⁻¹Σθ* when well specified);
- spurious correlation C^Σ(λ) = τ θ*_xᵀ (Σ_xx+τI)⁻¹ Σ_xy S_τ⁻¹ Σ_yx θ*_x with the Schur
  complement S_τ = Σ_yy + τI − Σ_yx(Σ_xx+τI)⁻¹Σ_xy;
- test loss L^Σ(λ) = σ² + [τ² βᵀ(Σ+τI)⁻¹Σ(Σ+τI)⁻¹β + σ² df₂/n] / (1 − df₂/n),
  df₂ = tr[Σ²(Σ+τI)⁻²].

Everything here is float64 numpy/scipy: the fixed point needs ~1e-13 accuracy near the
interpolation threshold, and flipping JAX's global x64 flag would change the dtypes of
the other experiments that share a process (the tests run them all together).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import linalg

_SYM_TOL = 1e-10   # relative asymmetry accepted in a covariance
_PSD_TOL = 1e-10   # relative negative eigenvalue accepted (round-off), clipped to 0


# ----------------------------------------------------------------------------- input checks


def check_covariance(sigma: np.ndarray, name: str = "Sigma") -> np.ndarray:
    """Return `sigma` as a float64 (D, D) array; ValueError if not a finite symmetric PSD matrix."""
    sigma = np.asarray(sigma, dtype=np.float64)
    if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1]:
        raise ValueError(f"{name} must be a square (D, D) matrix; got shape {sigma.shape}")
    if not np.all(np.isfinite(sigma)):
        raise ValueError(f"{name} has non-finite entries")
    scale = max(float(np.max(np.abs(sigma))), 1e-300)
    asym = float(np.max(np.abs(sigma - sigma.T)))
    if asym > _SYM_TOL * scale:
        raise ValueError(f"{name} is not symmetric: max |Σ - Σᵀ| = {asym:.3g}")
    smallest = float(linalg.eigvalsh(sigma, subset_by_index=[0, 0])[0])
    if smallest < -_PSD_TOL * scale:
        raise ValueError(f"{name} is not positive semi-definite: smallest eigenvalue "
                         f"{smallest:.6g} < 0")
    return sigma


def check_lambdas(lams) -> np.ndarray:
    """Return the ridge penalties as a float64 1-D array; ValueError for λ < 0 or non-finite."""
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if lams.ndim != 1:
        raise ValueError(f"ridge penalties must be a scalar or a 1-D array; got shape {lams.shape}")
    if not np.all(np.isfinite(lams)):
        raise ValueError(f"ridge penalties must be finite; got {lams}")
    if np.any(lams < 0):
        raise ValueError(f"ridge penalty λ must be >= 0; got λ = {float(lams[lams < 0][0])}")
    return lams


def _check_n(n: int) -> int:
    if int(n) != n or n < 1:
        raise ValueError(f"the number of samples n must be a positive integer; got {n}")
    return int(n)


def covariance_spectrum(sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition Σ = U diag(s) Uᵀ of a checked covariance; s (D,) >= 0, U (D, D)."""
    s, u = linalg.eigh(check_covariance(sigma))
    return np.clip(s, 0.0, None), u


# ----------------------------------------------------------------------------- fixed point


def degrees_of_freedom(s: np.ndarray, tau, power: int = 1) -> np.ndarray:
    """df_k(τ) = tr[Σᵏ(Σ+τI)⁻ᵏ] = Σ_i (s_i/(s_i+τ))ᵏ for eigenvalues s (D,), τ scalar or (L,).

    Zero eigenvalues contribute 0 (also at τ = 0)."""
    s = np.asarray(s, dtype=np.float64)[None, :]
    tau = np.atleast_1d(np.asarray(tau, dtype=np.float64))[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(s > 0, s / (s + tau), 0.0)
    return np.sum(ratio ** power, axis=1)


def effective_regularization(s: np.ndarray, lams, n: int, *, tol: float = 1e-13,
                             max_iter: int = 100) -> np.ndarray:
    """τ(λ) solving the fixed point λ = τ (1 − df₁(τ)/n), i.e. τ = λ + τ df₁(τ)/n.

    Args:
      s: (D,) eigenvalues of Σ (>= 0).
      lams: scalar or (L,) ridge penalties, >= 0.
      n: number of training samples.
    Returns: (L,) τ >= λ.

    h(τ) = τ − τ df₁(τ)/n − λ is increasing and convex on the branch where df₁(τ) < n, and
    h(λ) <= 0 <= h(λ + tr Σ/n). Newton's method started at the upper end therefore
    decreases monotonically to the unique root (no bracketing needed, quadratic
    convergence). At λ = 0: τ = 0 when rank Σ <= n (under-parameterised), else the
    positive root of df₁(τ) = n. RuntimeError if the iteration has not converged.
    """
    s = np.asarray(s, dtype=np.float64)
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise ValueError("the eigenvalues of Σ must be finite and >= 0")
    lams, n = check_lambdas(lams), _check_n(n)
    s_pos = s[s > _PSD_TOL * max(float(s.max(initial=0.0)), 1e-300)]
    rank, trace = s_pos.size, float(s_pos.sum())
    if rank == 0:
        return lams.copy()
    tau = lams + trace / n
    zero_branch = (lams == 0) & (rank <= n)
    scale = lams + trace / n
    for _ in range(max_iter):
        ratio = s_pos[None, :] / (s_pos[None, :] + tau[:, None])
        h = tau * (1.0 - ratio.sum(axis=1) / n) - lams
        dh = 1.0 - (ratio ** 2).sum(axis=1) / n
        step = np.where(zero_branch, 0.0, h / dh)
        tau = np.maximum(tau - step, lams)
        if np.all(np.abs(step) <= tol * scale):
            break
    else:
        raise RuntimeError(f"the fixed point for τ did not converge in {max_iter} Newton steps")
    return np.where(zero_branch, 0.0, tau)


# ----------------------------------------------------------------------------- Schur complement and C


def schur_complement(sigma: np.ndarray, d_x: int, tau: float = 0.0) -> np.ndarray:
    """S_τ = Σ_yy + τI − Σ_yx(Σ_xx + τI)⁻¹Σ_xy, (d_y, d_y); at τ = 0 the Schur complement
    Σ_{y|x} of Σ with respect to x (the covariance of y given x). Needs Σ_xx + τI invertible."""
    sigma = check_covariance(sigma)
    sxx, sxy, syy = sigma[:d_x, :d_x], sigma[:d_x, d_x:], sigma[d_x:, d_x:]
    a = sxx + tau * np.eye(d_x)
    return syy + tau * np.eye(syy.shape[0]) - sxy.T @ linalg.solve(a, sxy, assume_a="pos")


def spurious_correlation_schur(sigma: np.ndarray, d_x: int, theta_x: np.ndarray,
                               taus) -> np.ndarray:
    """C^Σ as a function of τ (paper's closed form, well-specified labels g = xᵀθ*_x + ε):

        C^Σ = τ · θ*_xᵀ (Σ_xx+τI)⁻¹ Σ_xy S_τ⁻¹ Σ_yx θ*_x,   S_τ the Schur complement above.

    Args: sigma (D, D), d_x, theta_x (d_x,), taus scalar or (L,) >= 0. Returns (L,).
    At τ = 0 it returns the limit θ̄_yᵀΣ_yxθ*_x with θ̄ = Σ⁺Σθ* (0 unless y is, in part, an
    exact linear function of x, i.e. unless Σ_{y|x} is singular).
    """
    sigma = check_covariance(sigma)
    theta_x = np.asarray(theta_x, dtype=np.float64)
    taus = np.atleast_1d(np.asarray(taus, dtype=np.float64))
    sxx, sxy, syy = sigma[:d_x, :d_x], sigma[:d_x, d_x:], sigma[d_x:, d_x:]
    cross = sxy.T @ theta_x                                       # Σ_yx θ*_x, (d_y,)
    out = np.empty(taus.shape)
    for i, tau in enumerate(taus):
        if tau == 0.0:
            theta = np.concatenate([theta_x, np.zeros(syy.shape[0])])
            out[i] = theta_bar(sigma, sigma @ theta, 0.0)[0, d_x:] @ cross
            continue
        a = linalg.cho_factor(sxx + tau * np.eye(d_x))
        s_tau = syy + tau * np.eye(syy.shape[0]) - sxy.T @ linalg.cho_solve(a, sxy)
        v = sxy.T @ linalg.cho_solve(a, theta_x)                  # Σ_yx (Σ_xx+τI)⁻¹ θ*_x
        out[i] = tau * cross @ linalg.solve(s_tau, v, assume_a="pos")
    return out


def theta_bar(sigma: np.ndarray, cross: np.ndarray, taus) -> np.ndarray:
    """Deterministic equivalent of the ridge estimator, θ̄(τ) = (Σ+τI)⁻¹ E[zg], (L, D).

    `cross` = E[zg] (D,) (= Σθ* for well-specified labels). At τ = 0 the pseudo-inverse
    (the minimum-norm population least-squares solution)."""
    s, u = covariance_spectrum(sigma)
    taus = np.atleast_1d(np.asarray(taus, dtype=np.float64))
    b = u.T @ np.asarray(cross, dtype=np.float64)
    with np.errstate(divide="ignore"):
        inv = np.where(s[None, :] + taus[:, None] > _PSD_TOL * max(s.max(), 1e-300),
                       1.0 / (s[None, :] + taus[:, None]), 0.0)
    return (inv * b[None, :]) @ u.T


# ----------------------------------------------------------------------------- all quantities


class Equivalents(NamedTuple):
    """Deterministic equivalents on a λ grid; every field is (L,)."""
    lambdas: np.ndarray
    tau: np.ndarray
    df1: np.ndarray
    df2: np.ndarray
    spurious: np.ndarray   # C^Σ(λ)
    loss: np.ndarray       # L^Σ(λ)


def _loss_from_spectrum(s, b, noise_var, tau, df2, n):
    bias = tau ** 2 * np.sum(s[None, :] * b[None, :] ** 2 / (s[None, :] + tau[:, None]) ** 2, axis=1)
    return noise_var + (bias + noise_var * df2 / n) / (1.0 - df2 / n)


def deterministic_equivalents(sigma: np.ndarray, d_x: int, theta_x: np.ndarray, noise: float,
                              n: int, lams) -> Equivalents:
    """C^Σ(λ) and L^Σ(λ) for well-specified labels g = xᵀθ*_x + ε, Var ε = noise².

    Args: sigma (D, D) PSD, d_x core dimension, theta_x (d_x,), noise σ >= 0, n samples,
    lams scalar or (L,) >= 0. C^Σ uses the Schur-complement form; L^Σ the eigenbasis of Σ.
    """
    sigma = check_covariance(sigma)
    if noise < 0:
        raise ValueError(f"the noise level σ must be >= 0; got {noise}")
    lams, n = check_lambdas(lams), _check_n(n)
    theta = np.concatenate([np.asarray(theta_x, np.float64), np.zeros(sigma.shape[0] - d_x)])
    s, u = covariance_spectrum(sigma)
    tau = effective_regularization(s, lams, n)
    df1, df2 = degrees_of_freedom(s, tau, 1), degrees_of_freedom(s, tau, 2)
    spurious = spurious_correlation_schur(sigma, d_x, theta_x, tau)
    loss = _loss_from_spectrum(s, u.T @ theta, noise ** 2, tau, df2, n)
    return Equivalents(lams, tau, df1, df2, spurious, loss)


def misspecified_equivalents(sigma: np.ndarray, d_x: int, cross: np.ndarray, var_g: float,
                             n: int, lams) -> Equivalents:
    """C^Σ and L^Σ from second moments only, for labels that need not be linear in x.

    Args: sigma (D, D) = Cov z, cross (D,) = E[zg], var_g = E[g²] (all centred), n, lams.
    The ridge estimator tracks θ̄ = (Σ+τI)⁻¹E[zg]; C^Σ = θ̄_yᵀE[yg]; the best linear
    predictor β = Σ⁺E[zg] leaves the residual variance σ_eff² = E[g²] − βᵀΣβ, which plays
    the role of σ² in L^Σ. With cross = Σ[θ*_x; 0] and var_g = θ*ᵀΣθ* + σ² this equals
    `deterministic_equivalents` (checked in the tests).
    """
    sigma = check_covariance(sigma)
    lams, n = check_lambdas(lams), _check_n(n)
    cross = np.asarray(cross, dtype=np.float64)
    s, u = covariance_spectrum(sigma)
    tau = effective_regularization(s, lams, n)
    df1, df2 = degrees_of_freedom(s, tau, 1), degrees_of_freedom(s, tau, 2)
    spurious = theta_bar(sigma, cross, tau)[:, d_x:] @ cross[d_x:]
    c = u.T @ cross
    keep = s > _PSD_TOL * max(s.max(), 1e-300)
    b = np.where(keep, c / np.where(keep, s, 1.0), 0.0)           # Uᵀβ, β = Σ⁺E[zg]
    noise_var = max(float(var_g - np.sum(s * b ** 2)), 0.0)
    loss = _loss_from_spectrum(s, b, noise_var, tau, df2, n)
    return Equivalents(lams, tau, df1, df2, spurious, loss)


# ----------------------------------------------------------------------------- trade-off


class TradeOff(NamedTuple):
    """Where the L-optimal λ sits relative to the λ intervals on which C increases."""
    lambda_loss_opt: float      # argmin_λ L on the grid
    lambda_spurious_peak: float  # argmax_λ C on the grid
    increasing_interval: tuple[float, float] | None  # the grid interval containing λ_L*
    # on which C is increasing, or None
    spurious_increasing_at_opt: bool


def trade_off(lams: np.ndarray, spurious: np.ndarray, loss: np.ndarray) -> TradeOff:
    """Locate argmin L and the maximal intervals of the grid on which C increases.

    Args: lams (L,) increasing, spurious (L,) and loss (L,) on that grid (a dense theory
    grid, or simulation averages). C is "increasing at λ_L*" when the one-sided differences
    around the grid minimiser are positive (one-sided at the ends of the grid).
    """
    lams, spurious, loss = (np.asarray(a, dtype=np.float64) for a in (lams, spurious, loss))
    if lams.ndim != 1 or lams.size < 3 or np.any(np.diff(lams) <= 0):
        raise ValueError("trade_off needs an increasing grid of at least 3 λ values")
    i = int(np.argmin(loss))
    rising = np.diff(spurious) > 0                       # segment k: [λ_k, λ_{k+1}]
    left = rising[i - 1] if i > 0 else None
    right = rising[i] if i < lams.size - 1 else None
    increasing = bool((left is None or left) and (right is None or right))
    interval = None
    if increasing:
        lo = i
        while lo > 0 and rising[lo - 1]:
            lo -= 1
        hi = i
        while hi < lams.size - 1 and rising[hi]:
            hi += 1
        interval = (float(lams[lo]), float(lams[hi]))
    return TradeOff(float(lams[i]), float(lams[int(np.argmax(spurious))]), interval, increasing)
