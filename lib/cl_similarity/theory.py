"""Closed forms of the full-batch and mini-batch results (§5 of Lee, Lim, Lee & Sohn, 2025).

Notation: n instances, 2n unit embeddings u_i, v_i in R^d, p = mean positive cosine
(1/n) Σ u_iᵀv_i, q = mean cross-view negative cosine (1/(n(n−1))) Σ_{i≠j} u_iᵀv_j.

* Thm 5.1: for Def. 3.1 losses, for Def. 3.2 losses with within-view negatives, and for
  Def. 3.2 cross-only losses when ϕ′(1) > (n−2)/(2(n−1))·ψ′(−1/(n−1)), the optimum (d ≥ n−1)
  is the simplex ETF: p = 1, q = −1/(n−1) (`etf`).
* Thm 5.2: any embeddings satisfy p ≤ 1 + q + 1/(n−1) (`paper_alignment_bound`), so q below
  −1/(n−1) forbids p = 1. The tight form used here [derived]: from
  (Σu)ᵀ(Σv) = n p + n(n−1) q ≥ −¼‖Σ(u_i − v_i)‖² ≥ −½ n²(1 − p),
      q ≥ B(p) = −(n(1 − p)/2 + p)/(n − 1)                  (`negative_lower_bound`),
  attained for every p by u_i = αx_i + βz, v_i = αx_i − βz (x a simplex ETF ⟂ z, α²+β²=1,
  needs d ≥ n). Its slope B′ = (n−2)/(2(n−1)) is the factor in Thm 5.3.
* Thm 5.3 / Ex. 5.4 (excessive separation): for a Def. 3.2 loss with cross-view negatives
  only, Jensen (ϕ concave, ψ convex increasing) and q ≥ B(p) give
      L ≥ h(p) = −ϕ(p) + ψ(B(p)),
  with equality on the construction above, so the optimum is p* = argmin_{[−1,1]} h, q* = B(p*)
  (`cross_only_optimum`, a 1-D convex problem solved by bisection on h′). p* < 1 exactly
  when h′(1) > 0, i.e. ϕ′(1) < (n−2)/(2(n−1))·ψ′(−1/(n−1)) — for SigLIP
  (1 + e^{t/(n−1)+b})/(1 + e^{t−b}) < (n−2)/2 (`siglip_excessive`).
* Spectral CL (ϕ = 2x, ψ = x², not increasing below 0, so outside Thm 5.1): L ≥ −2, attained
  by u_i = v_i orthonormal (d ≥ n): p = 1, q = 0 (`spectral_optimum`).
* Thm 5.5 (b fixed mini-batches of size m = n/b, d ≥ b(m−1)): at the optimum q = −1/(n−1)
  and (n−m)/((m−1)(n−1)²) ≤ Var[s_neg] ≤ n(n−m)/((m−1)(n−1)²) (`minibatch_variance_bounds`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit


class Optimum(NamedTuple):
    """Optimal mean positive cosine p and mean cross-view negative cosine q."""

    pos: float
    neg: float


def etf(n: int) -> Optimum:
    """Thm 5.1: p = 1, q = −1/(n−1) (the simplex equiangular tight frame)."""
    _check_n(n)
    return Optimum(1.0, -1.0 / (n - 1))


def paper_alignment_bound(neg_mean, n: int):
    """Thm 5.2: the largest mean positive cosine possible given q: 1 + q + 1/(n−1)."""
    return 1.0 + np.asarray(neg_mean) + 1.0 / (n - 1)


def negative_lower_bound(pos_mean, n: int):
    """The tight form of Thm 5.2 [derived]: q ≥ −(n(1 − p)/2 + p)/(n − 1)."""
    p = np.asarray(pos_mean, dtype=np.float64)
    return -(0.5 * n * (1.0 - p) + p) / (n - 1)


def siglip_derivatives(t: float, b: float, n: int):
    """(ϕ′, ψ′) of SigLIP in the paper's convention: ϕ = −log(1+e^{−tx+b}), ψ = (n−1)log(1+e^{tx−b})."""
    def dpos(x):
        return t * expit(-(t * x - b))

    def dneg(x):
        return (n - 1) * t * expit(t * x - b)

    return dpos, dneg


def siglip_excessive(t: float, b: float, n: int) -> bool:
    """Ex. 5.4 / Eq. (10): (1 + e^{t/(n−1)+b})/(1 + e^{t−b}) < (n−2)/2 (computed in logs)."""
    _check_n(n)
    log_lhs = np.logaddexp(0.0, t / (n - 1) + b) - np.logaddexp(0.0, t - b)
    return bool(n > 2 and log_lhs < np.log((n - 2) / 2.0))


def cross_only_optimum(dpos, dneg, n: int, iters: int = 200) -> Optimum:
    """Optimum of a cross-view-only Def. 3.2 loss (d ≥ n) from its derivatives ϕ′, ψ′.

    Minimises the convex h(p) = −ϕ(p) + ψ(B(p)) on [−1, 1] by bisection on
    h′(p) = −ϕ′(p) + B′ψ′(B(p)), B′ = (n−2)/(2(n−1)); float64, to machine precision.
    """
    _check_n(n)
    slope = (n - 2) / (2.0 * (n - 1))

    def dh(p):
        return -dpos(p) + slope * dneg(negative_lower_bound(p, n))

    if dh(1.0) <= 0.0:
        p = 1.0
    elif dh(-1.0) >= 0.0:
        p = -1.0
    else:
        lo, hi = -1.0, 1.0
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if dh(mid) < 0.0 else (lo, mid)
        p = 0.5 * (lo + hi)
    return Optimum(float(p), float(negative_lower_bound(p, n)))


def spectral_optimum(n: int, d: int) -> Optimum:
    """Spectral CL with normalised embeddings and d ≥ n: p = 1, q = 0 (orthonormal u_i = v_i)."""
    _check_n(n)
    if d < n:
        raise ValueError(f"the spectral-loss closed form needs d ≥ n; got d = {d}, n = {n}")
    return Optimum(1.0, 0.0)


def optimum(name: str, negatives: str, n: int, d: int, *, siglip_t: float = 10.0,
            siglip_b: float = 0.0) -> Optimum:
    """Closed-form optimal (p, q) of loss `name` with `negatives` in {cross, within, both}."""
    if d < n:
        raise ValueError(f"the closed forms here assume d ≥ n; got d = {d}, n = {n}")
    if name == "spectral":
        if negatives != "cross":
            raise ValueError("the spectral-loss closed form is for cross-view negatives only")
        return spectral_optimum(n, d)
    if name == "siglip" and negatives == "cross":
        return cross_only_optimum(*siglip_derivatives(siglip_t, siglip_b, n), n)
    return etf(n)


def minibatch_variance_bounds(n: int, m: int) -> tuple[float, float]:
    """Thm 5.5: bounds on Var[s_neg] over all n(n−1) cross pairs with b = n/m fixed batches."""
    _check_n(n)
    if m < 2 or n % m:
        raise ValueError(f"batch size m = {m} must be ≥ 2 and divide n = {n}")
    base = (n - m) / ((m - 1) * (n - 1) ** 2)
    return base, n * base


def _check_n(n: int) -> None:
    if n < 2:
        raise ValueError(f"n must be ≥ 2 (one positive and one negative), got {n}")
