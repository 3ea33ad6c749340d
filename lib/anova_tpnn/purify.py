"""Functional-ANOVA purification of fitted components (orders ≤ 2) under a product measure.

The components of an unconstrained additive model (NA²M, NB²M, an EBM) are not
identifiable: constants move between the intercept and the components, and a main effect
can hide inside a pair. Purification (Hooker 2004; Lengerich et al. 2020) projects every
model onto the unique functional ANOVA decomposition of its own output function under an
input measure μ = ∏_j μ_j: main effects get μ_j-mean zero, pairs get zero marginals
∫ f_jk dμ_j = ∫ f_jk dμ_k = 0, and whatever is removed moves to the lower orders
(pair → its two mains and the intercept, main → the intercept). The output (intercept +
Σ components) is unchanged at every point, and an already pure model is left as it is.

The measure here is μ_M: on each feature the M mid-quantiles of its training values,
(m + ½)/M for m < M, each of mass 1/M (`quantile_grid`) — a product of the training
marginals (the measure of ANOVA-TPNN's own constraint) on M atoms per feature. To
evaluate every pair on its full M × M grid with few rows, the points are the rows of a
strength-2 orthogonal array (`design`): row (a, b) ∈ Z_M², feature j at grid index
(a + j·b) mod M with M prime and p ≤ M. For any two features j ≠ k the map
(a, b) ↦ (a + j b, a + k b) is a bijection of Z_M² (j − k is invertible mod M), so the M²
rows hold every pair's grid exactly once and every main's grid exactly M times. Means over
the rows are therefore exact μ_M integrals for every component of order ≤ 2.

Shapes: grid (M, p) values; idx (M², p) grid indices; comps (R, M², C) on `names`
(feature tuples, orders 1 and 2, the column order of `model.component_names`).
"""
from __future__ import annotations

import numpy as np


def is_prime(m: int) -> bool:
    return m >= 2 and all(m % d for d in range(2, int(m ** 0.5) + 1))


def grid_size(requested: int, num_features: int) -> int:
    """The smallest prime M ≥ max(requested, num_features) (the design's conditions)."""
    m = max(int(requested), int(num_features), 2)
    while not is_prime(m):
        m += 1
    return m


def quantile_grid(x_train: np.ndarray, m: int) -> np.ndarray:
    """(M, p): the mid-quantiles (i + ½)/M of each training column (lower interpolation
    would also do; a discrete feature repeats its values in proportion to their mass)."""
    x_train = np.asarray(x_train, np.float64)
    if x_train.ndim != 2 or len(x_train) < 1:
        raise ValueError(f"x_train must be (n, p) with n >= 1, got shape {x_train.shape}")
    q = (np.arange(m) + 0.5) / m
    return np.quantile(x_train, q, axis=0, method="inverted_cdf")


def design(num_features: int, m: int) -> np.ndarray:
    """(M², p) int grid indices: row a·M + b has feature j at (a + j·b) mod M."""
    if not is_prime(m):
        raise ValueError(f"purification grid size M = {m} must be prime")
    if num_features > m:
        raise ValueError(f"purification grid size M = {m} must be >= the number of "
                         f"features {num_features}")
    a, b = np.divmod(np.arange(m * m), m)
    return (a[:, None] + np.arange(num_features)[None, :] * b[:, None]) % m


def design_points(grid: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(M², p) input rows: x[r, j] = grid[idx[r, j], j]."""
    return np.take_along_axis(np.asarray(grid), np.asarray(idx), axis=0)


def purify(comps: np.ndarray, idx: np.ndarray, names: list, intercept=None
           ) -> tuple[np.ndarray, np.ndarray]:
    """(purified comps (R, M², C), intercept (R,)) of components on the `design` rows.

    comps (R, M², C): replica r's component S at design row i (a main depends only on its
    own feature's index, a pair only on its two). intercept (R,) or None (zeros) is the
    model's constant; the purified intercept adds the mass moved out of the components, so
    intercept + Σ_S f_S is unchanged at every row. ValueError for orders above 2 or shapes
    that do not match."""
    comps = np.asarray(comps, np.float64)
    idx = np.asarray(idx)
    if comps.ndim != 3 or comps.shape[1] != len(idx) or comps.shape[2] != len(names):
        raise ValueError(f"comps must be (R, {len(idx)}, {len(names)}) (replicas × design "
                         f"rows × components), got {comps.shape}")
    if any(len(s) > 2 or len(s) < 1 for s in names):
        raise ValueError("purification covers components of order 1 and 2 only, got "
                         f"{[s for s in names if len(s) > 2 or len(s) < 1][:3]}")
    r, n, _ = comps.shape
    m = int(round(np.sqrt(n)))
    if m * m != n:
        raise ValueError(f"{n} design rows is not a square M²")
    icpt = np.zeros(r) if intercept is None else np.asarray(intercept, np.float64).copy()
    col = {s: c for c, s in enumerate(names)}
    mains = {}
    for s, c in col.items():              # main j on its M grid points (mean over M copies)
        if len(s) == 1:
            j = s[0]
            g = np.zeros((r, m))
            np.add.at(g, (slice(None), idx[:, j]), comps[:, :, c])
            mains[j] = g / m
    out = np.zeros_like(comps)
    for s, c in col.items():              # pairs: pure part; the marginals move down
        if len(s) != 2:
            continue
        j, k = s
        g = np.zeros((r, m, m))
        g[:, idx[:, j], idx[:, k]] = comps[:, :, c]
        row, cl = g.mean(axis=2), g.mean(axis=1)            # (R, M): ∫ dμ_k, ∫ dμ_j
        grand = g.mean(axis=(1, 2))
        pure = g - row[:, :, None] - cl[:, None, :] + grand[:, None, None]
        out[:, :, c] = pure[:, idx[:, j], idx[:, k]]
        for f, add in ((j, row), (k, cl)):
            if f not in mains:
                raise ValueError(f"pair {s} needs its main effect ({f},) among the names")
            mains[f] = mains[f] + add - grand[:, None]
        icpt += grand
    for s, c in col.items():
        if len(s) == 1:
            g = mains[s[0]]
            mean = g.mean(axis=1)
            out[:, :, c] = (g - mean[:, None])[:, idx[:, s[0]]]
            icpt += mean
    return out, icpt
