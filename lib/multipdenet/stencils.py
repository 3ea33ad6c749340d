"""Stencil families for the learnable derivative filters (notes §1.2), as pure numpy.

Every learnable filter is affine in its parameters: `K(θ) = base + Σ_r θ_r basis[r]`, with
`base` the 4th-order central finite-difference stencil and θ = 0 at initialisation. The
basis decides the filter kind:

- "sum_rules" (the default symmetric filter): the basis spans the kernels of the
  derivative's own parity class (∂x: odd in x, even in y; ∂xx: even in x and y) whose
  moments `M_pq = Σ K[i, j] x_j^p y_i^q` that fix consistency vanish. So for any θ the
  kernel sums to 0, has first moment M10 = 1 (∂x) or second moment M20 = 2 and M02 = 0
  (∂xx), and all moments of the wrong parity vanish (no ∂y or ∂xy leakage). The free
  parameters are the entries of the upper-left quadrant except the pivots solved from the
  constraints: 5 for ∂x (the 6 class entries minus M10 = 1), 6 for ∂xx (9 minus 3).
  (The paper reports 6 learnable parameters per order, P2C2Net's code uses 8; the counts
  here are the ones these constraints leave.)
- "p2c2net": the 8-parameter layout of the P2C2Net code (notes §1.2 table). Only the zero
  sum is guaranteed; the first-order kernel may pick up a ∂y part.
- "fd4_taps": "sum_rules" restricted to the taps of the FD4 stencil itself (the centre
  row): 1 free parameter per derivative. ∂x: `[−b, −a, 0, a, b]` with `a + 2b = ½`; ∂xx:
  `[c₂, c₁, c₀, c₁, c₂]` with `c₀ + 2c₁ + 2c₂ = 0`, `c₁ + 4c₂ = 1`. So a learnable micro
  step reads as many taps as the frozen one (4 and 5); θ moves the k³ (∂x, dispersion)
  and k⁴ (∂xx, hyper-diffusion) terms of the symbols.
- "free": all 25 entries.
- "frozen": no parameters.

Kernel indices are `[i, j]` = `[y, x]` with offsets `i - c, j - c` from the centre `c`; the
kernels are applied as cross-correlations, `(K ⋆ u)[y, x] = Σ K[i, j] u[y + i - c, x + j - c]`.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

FILTER_MODES = ("symmetric", "free", "frozen")
SYMMETRIC_LAYOUTS = ("sum_rules", "p2c2net", "fd4_taps")

FIRST_ORDER_STENCIL = np.array([1.0, -8.0, 0.0, 8.0, -1.0]) / 12.0
SECOND_ORDER_STENCIL = np.array([-1.0, 16.0, -30.0, 16.0, -1.0]) / 12.0
THIRD_ORDER_STENCIL = np.array([1.0, -8.0, 13.0, 0.0, -13.0, 8.0, -1.0]) / 8.0


class StencilFamily(NamedTuple):
    """Affine stencil family `K(θ) = base + Σ_r θ_r basis[r]`.

    base: `(5, 5)` (2-D) or `(n,)` (1-D) kernel at θ = 0.
    basis: `(n_params, *base.shape)`.
    """

    base: np.ndarray
    basis: np.ndarray


def moment(kernel: np.ndarray, p: int, q: int = 0) -> float:
    """`M_pq = Σ K[i, j] x^p y^q` over centred offsets; a 1-D kernel uses only `x^p`."""
    c = kernel.shape[-1] // 2
    x = np.arange(kernel.shape[-1]) - c
    if kernel.ndim == 1:
        return float(np.sum(kernel * x**p))
    y = np.arange(kernel.shape[0]) - kernel.shape[0] // 2
    return float(np.sum(kernel * x[None, :] ** p * y[:, None] ** q))


def _row(stencil: np.ndarray) -> np.ndarray:
    """Embed a 5-point x-stencil in the centre row of a 5×5 kernel."""
    k = np.zeros((5, 5))
    k[2] = stencil
    return k


def _mirror(i: int, j: int, x_sign: int, y_sign: int, n: int = 5) -> np.ndarray:
    """Kernel with 1 at `[i, j]` and its mirror images across the centre row and column."""
    k = np.zeros((n, n))
    for ii, sy in ((i, 1), (n - 1 - i, y_sign)):
        for jj, sx in ((j, 1), (n - 1 - j, x_sign)):
            k[ii, jj] = sy * sx
    return k


def _constrained_basis(
    entries: list[np.ndarray], n_pivots: int, constraints: list[Callable[[np.ndarray], float]]
) -> np.ndarray:
    """Basis of the span of `entries` on which every linear `constraint` vanishes.

    The last `n_pivots` entries are solved from the constraints; each of the others gives
    one basis kernel: itself plus the pivot combination that cancels its constraint values.
    """
    free, pivots = entries[:-n_pivots], entries[-n_pivots:]
    c_piv = np.array([[con(p) for p in pivots] for con in constraints])
    out = []
    for e in free:
        coef = np.linalg.solve(c_piv, -np.array([con(e) for con in constraints]))
        out.append(e + np.tensordot(coef, np.stack(pivots), axes=1))
    return np.stack(out)


def first_order_family(mode: str, layout: str = "sum_rules") -> StencilFamily:
    """The 5×5 ∂x family (divide by h to use); `∂y` uses the transposed kernel."""
    base = _row(FIRST_ORDER_STENCIL)
    if mode == "frozen":
        return StencilFamily(base, np.zeros((0, 5, 5)))
    if mode == "free":
        return StencilFamily(base, np.eye(25).reshape(25, 5, 5))
    if layout == "sum_rules":
        # odd in x, even in y; quadrant entries (i, j), i <= 2, j <= 1; pivot (2, 1)
        entries = [_mirror(i, j, -1, 1) for i, j in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]]
        return StencilFamily(base, _constrained_basis(entries, 1, [lambda k: moment(k, 1, 0)]))
    if layout == "p2c2net":
        # rows [a b c -b -a], [d e f -e -d], [g h 0 -h -g], [-d -e -f e d], [-a -b -c b a]
        odd_odd = [_mirror(i, j, -1, -1) for i, j in [(0, 0), (0, 1), (1, 0), (1, 1)]]
        even_odd = [_mirror(i, 2, 1, -1) for i in (0, 1)]
        odd_even = [_mirror(2, j, -1, 1) for j in (0, 1)]
        basis = np.stack(odd_odd[:2] + even_odd[:1] + odd_odd[2:] + even_odd[1:] + odd_even)
        return StencilFamily(base, basis)
    if layout == "fd4_taps":
        entries = [_mirror(2, j, -1, 1) for j in (0, 1)]  # pivot: the ±1 taps
        return StencilFamily(base, _constrained_basis(entries, 1, [lambda k: moment(k, 1, 0)]))
    raise ValueError(f"unknown symmetric filter layout {layout!r}; allowed: {SYMMETRIC_LAYOUTS}")


def second_order_family(mode: str, layout: str = "sum_rules") -> StencilFamily:
    """The 5×5 ∂xx family (divide by h² to use); `∂yy` uses the transposed kernel."""
    base = _row(SECOND_ORDER_STENCIL)
    if mode == "frozen":
        return StencilFamily(base, np.zeros((0, 5, 5)))
    if mode == "free":
        return StencilFamily(base, np.eye(25).reshape(25, 5, 5))
    quadrant = [(i, j) for i in range(3) for j in range(3)]
    if layout == "sum_rules":
        # even in x and y; pivots: y-neighbour (1, 2), x-neighbour (2, 1), centre (2, 2)
        order = [q for q in quadrant if q not in [(1, 2), (2, 1), (2, 2)]] + [(1, 2), (2, 1), (2, 2)]
        entries = [_mirror(i, j, 1, 1) for i, j in order]
        constraints = [lambda k: moment(k, 0, 0), lambda k: moment(k, 2, 0), lambda k: moment(k, 0, 2)]
        return StencilFamily(base, _constrained_basis(entries, 3, constraints))
    if layout == "p2c2net":
        # the 8 non-centre quadrant values; the centre is minus the sum of the others
        centre = _mirror(2, 2, 1, 1)
        entries = [_mirror(i, j, 1, 1) for i, j in quadrant if (i, j) != (2, 2)]
        basis = np.stack([e - e.sum() * centre for e in entries])
        return StencilFamily(base, basis)
    if layout == "fd4_taps":
        entries = [_mirror(2, j, 1, 1) for j in (0, 1, 2)]  # pivots: the ±1 taps and the centre
        constraints = [lambda k: moment(k, 0, 0), lambda k: moment(k, 2, 0)]
        return StencilFamily(base, _constrained_basis(entries, 2, constraints))
    raise ValueError(f"unknown symmetric filter layout {layout!r}; allowed: {SYMMETRIC_LAYOUTS}")


def first_order_family_1d(mode: str) -> StencilFamily:
    """The 5-point ∂x family; "symmetric": odd with M1 = 1 (1 free parameter)."""
    base = FIRST_ORDER_STENCIL.copy()
    if mode == "frozen":
        return StencilFamily(base, np.zeros((0, 5)))
    if mode == "free":
        return StencilFamily(base, np.eye(5))
    odd = [np.eye(5)[j] - np.eye(5)[4 - j] for j in (0, 1)]
    return StencilFamily(base, _constrained_basis(odd, 1, [lambda k: moment(k, 1)]))


def third_order_family_1d(mode: str) -> StencilFamily:
    """The 7-point ∂xxx family (divide by h³), initialised at the 4th-order stencil.

    A 5-point odd stencil with M1 = 0 and M3 = 6 is unique (and only 2nd-order accurate),
    so the learnable ∂xxx filter uses 7 points; "symmetric": odd with M1 = 0, M3 = 6
    (1 free parameter).
    """
    base = THIRD_ORDER_STENCIL.copy()
    if mode == "frozen":
        return StencilFamily(base, np.zeros((0, 7)))
    if mode == "free":
        return StencilFamily(base, np.eye(7))
    odd = [np.eye(7)[j] - np.eye(7)[6 - j] for j in (0, 1, 2)]
    constraints = [lambda k: moment(k, 1), lambda k: moment(k, 3)]
    return StencilFamily(base, _constrained_basis(odd, 2, constraints))
