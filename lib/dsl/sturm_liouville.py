"""Sturm–Liouville problems on a segment: discretisation, first K eigenpairs, implicit gradients.

The regular SL problem on [0, L] with Dirichlet ends (the 1-D problem DSL solves along each
field line, notes §B "Sturm–Liouville problem along each line"):

    −(p u′)′ + q u = λ w u,   u(0) = u(L) = 0,   p > 0, w > 0.              (SL)

Discretisation: N uniform nodes t_j = j h, h = L/(N−1), continuous piecewise-linear finite
elements; the N−2 interior nodal values are the unknowns (Dirichlet ends removed). With the
coefficients given at the nodes (p on an element = mean of its two nodal values):

    A_ij = Σ_e p_e ∫ φ_i′ φ_j′ + Σ_e q_e ∫ φ_i φ_j        (stiffness + potential)
    B_ij = Σ_e w_e ∫ φ_i φ_j                               (mass)

`mass="consistent"` integrates φ_i φ_j exactly (tridiagonal B, eigenvalues converge from
above, O(h²)); `mass="lumped"` puts the row sums on the diagonal (q and w at the nodes), which
is the classical three-point finite-difference scheme: eigenvalues converge from below, O(h²),
and for constant coefficients the nodal eigenvectors are exactly sin(kπ t_j / L).

Either way A u = λ B u is a generalised symmetric-definite eigenproblem (A symmetric, B
symmetric positive definite). `eigenpairs` returns its K smallest eigenpairs, B-orthonormal
(uᵀ B u = 1, the discrete ∫ u² w = 1) with the sign fixed by a positive slope at t = 0
(u at the first interior node > 0). Its gradient is *not* obtained by differentiating the
dense solver: a custom VJP applies the implicit function theorem to

    F(u, λ; A, B) = ( A u − λ B u ,  ½ (1 − uᵀ B u) ) = 0,

whose Jacobian in (u, λ) is the symmetric bordered matrix  [[A − λB, −Bu], [−(Bu)ᵀ, 0]]
(non-singular for a simple eigenvalue). For cotangents (ū, λ̄) one solves J ξ = (ū, λ̄) and
gets Ā = −ξ₁ uᵀ, B̄ = λ ξ₁ uᵀ + ½ ξ₂ u uᵀ (summed over the K pairs); only the K retained
pairs enter, as in a shooting/IFT solver that never sees the rest of the spectrum.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

MASS_KINDS = ("lumped", "consistent")


class Eigen(NamedTuple):
    """K smallest eigenpairs of one problem: values (K,) ascending, vectors (M, K) interior
    nodal values, B-orthonormal."""
    values: jax.Array
    vectors: jax.Array


def max_modes(num_nodes: int) -> int:
    """Largest K a grid of `num_nodes` nodes (ends included) can give: its N − 2 unknowns."""
    return num_nodes - 2


def check_problem(p, w, num_modes: int) -> None:
    """Clear `ValueError` for a problem the solver cannot treat: K > N − 2, K < 1, fewer than
    3 nodes, non-positive p or w. Value checks run only on concrete (non-traced) arrays;
    inside a jitted model p and w are positive by construction (softplus + floor)."""
    n = int(np.shape(p)[-1])
    if np.shape(w)[-1] != n:
        raise ValueError(f"p has {n} nodes but w has {np.shape(w)[-1]}; they must match")
    if n < 3:
        raise ValueError(f"a Sturm–Liouville grid needs at least 3 nodes (2 ends + 1 interior); "
                         f"got {n}")
    if num_modes < 1 or num_modes > max_modes(n):
        raise ValueError(f"num_modes K = {num_modes} is not allowed: a grid of {n} nodes has "
                         f"{max_modes(n)} interior unknowns, so 1 <= K <= {max_modes(n)}")
    for name, arr in (("p", p), ("w", w)):
        if isinstance(arr, jax.core.Tracer):
            continue
        a = np.asarray(arr)
        if not np.all(np.isfinite(a)) or np.any(a <= 0):
            bad = float(np.min(a)) if np.all(np.isfinite(a)) else float("nan")
            raise ValueError(f"coefficient {name} must be finite and > 0 at every node "
                             f"(a regular Sturm–Liouville problem); min is {bad!r}")


def assemble(p: jax.Array, q: jax.Array, w: jax.Array, length: jax.Array,
             mass: str = "lumped") -> tuple[jax.Array, jax.Array]:
    """Matrices (A, B), each (M, M) with M = N − 2, of problem (SL) on [0, length].

    p, q, w: (N,) coefficient values at the N uniform nodes (ends included); length: ().
    """
    if mass not in MASS_KINDS:
        raise ValueError(f"mass = {mass!r} is not one of {MASS_KINDS}")
    n = p.shape[-1]
    h = length / (n - 1)
    pe, qe, we = (0.5 * (c[:-1] + c[1:]) for c in (p, q, w))      # per element (N − 1,)
    # Full (N × N) assembly, then drop the two Dirichlet rows/columns.
    k_diag = jnp.zeros(n).at[:-1].add(pe).at[1:].add(pe) / h
    k_off = -pe / h
    if mass == "consistent":
        def elem_mass(c):
            diag = jnp.zeros(n).at[:-1].add(c).at[1:].add(c) * h / 3.0
            return diag, c * h / 6.0
        qd, qo = elem_mass(qe)
        wd, wo = elem_mass(we)
    else:   # lumped: row sums of the element matrices, coefficient at the node
        lump = jnp.full(n, h).at[0].set(h / 2).at[-1].set(h / 2)
        qd, qo = q * lump, jnp.zeros(n - 1)
        wd, wo = w * lump, jnp.zeros(n - 1)

    def tri(d, o):
        d, o = d[1:-1], o[1:-1]
        return jnp.diag(d) + jnp.diag(o, 1) + jnp.diag(o, -1)

    return tri(k_diag + qd, k_off + qo), tri(wd, wo)


def _full_eigenpairs(a: jax.Array, b: jax.Array) -> Eigen:
    """All M pairs of A u = λ B u via Cholesky reduction and a symmetric eigensolver;
    B-orthonormal, sign fixed by u[0] ≥ 0, values ascending."""
    chol = jnp.linalg.cholesky(b)
    tri = jax.scipy.linalg.solve_triangular
    c = tri(chol, tri(chol, a, lower=True).T, lower=True)           # L⁻¹ A L⁻ᵀ
    c = 0.5 * (c + c.T)
    vals, vecs = jnp.linalg.eigh(c)
    u = tri(chol.T, vecs, lower=False)
    sign = jnp.where(u[0] >= 0, 1.0, -1.0)
    return Eigen(vals, u * sign)


def _dense_eigenpairs(a: jax.Array, b: jax.Array, num_modes: int) -> Eigen:
    full = _full_eigenpairs(a, b)
    return Eigen(full.values[:num_modes], full.vectors[:, :num_modes])


def _bordered_cotangent(a, b, lam, u, u_bar, lam_bar):
    """(Ā, B̄) of one eigenpair by the implicit function theorem: solve the bordered system
    J ξ = (ū, λ̄) (module docstring)."""
    m = a.shape[0]
    bu = b @ u
    jac = jnp.zeros((m + 1, m + 1), a.dtype)
    jac = jac.at[:m, :m].set(a - lam * b).at[:m, m].set(-bu).at[m, :m].set(-bu)
    xi = jnp.linalg.solve(jac, jnp.concatenate([u_bar, lam_bar[None]]))
    xi1, xi2 = xi[:m], xi[m]
    a_bar = -jnp.outer(xi1, u)
    b_bar = lam * jnp.outer(xi1, u) + 0.5 * xi2 * jnp.outer(u, u)
    return a_bar, b_bar


def _spectral_cotangent(full: Eigen, num_modes: int, u_bar, lam_bar):
    """(Ā, B̄) of the K pairs from the same bordered systems solved in closed form in the
    B-orthonormal eigenbasis U (all M pairs, UᵀBU = I, UᵀAU = Λ):

        ξ₁⁽ᵏ⁾ = Σ_{j≠k} u_j (u_jᵀ ū_k)/(λ_j − λ_k) − λ̄_k u_k,   ξ₂⁽ᵏ⁾ = −u_kᵀ ū_k,

    then Ā = −Σ_k ξ₁⁽ᵏ⁾ u_kᵀ, B̄ = Σ_k λ_k ξ₁⁽ᵏ⁾ u_kᵀ + ½ ξ₂⁽ᵏ⁾ u_k u_kᵀ (matrix products only)."""
    lam_all, u_all = full.values, full.vectors
    lam, u = lam_all[:num_modes], u_all[:, :num_modes]
    g = u_all.T @ u_bar                                              # (M, K)
    gap = lam_all[:, None] - lam[None, :]
    own = jnp.arange(lam_all.shape[0])[:, None] == jnp.arange(num_modes)[None, :]
    alpha = jnp.where(own, -lam_bar[None, :], g / jnp.where(own, 1.0, gap))
    xi1 = u_all @ alpha                                              # (M, K)
    xi2 = -jnp.sum(u * u_bar, axis=0)                                # (K,)
    a_bar = -xi1 @ u.T
    b_bar = (xi1 * lam[None, :]) @ u.T + 0.5 * (u * xi2[None, :]) @ u.T
    return a_bar, b_bar


def _make_solver(num_modes: int, how: str):
    @jax.custom_vjp
    def solve(a, b):
        return _dense_eigenpairs(a, b, num_modes)

    def fwd(a, b):
        full = _full_eigenpairs(a, b)
        out = Eigen(full.values[:num_modes], full.vectors[:, :num_modes])
        return out, (a, b, full)

    def bwd(res, cot):
        a, b, full = res
        if how == "spectral":
            return _spectral_cotangent(full, num_modes, cot.vectors, cot.values)
        parts = jax.vmap(_bordered_cotangent, in_axes=(None, None, 0, 1, 1, 0))(
            a, b, full.values[:num_modes], full.vectors[:, :num_modes], cot.vectors,
            cot.values)
        return parts[0].sum(0), parts[1].sum(0)

    solve.defvjp(fwd, bwd)
    return solve


_SOLVERS: dict[tuple[int, str], object] = {}
GRADS = ("implicit", "spectral", "unrolled")


def eigenpairs(a: jax.Array, b: jax.Array, num_modes: int, grad: str = "implicit") -> Eigen:
    """K = num_modes smallest eigenpairs of A u = λ B u (A, B: (M, M) symmetric, B ≻ 0).

    grad="implicit": custom VJP by the implicit function theorem, one bordered (M+1) solve
    per retained pair; grad="spectral": the same IFT cotangents in closed form through the
    full eigenbasis of the forward solve (cheaper; equal up to round-off);
    grad="unrolled": JAX's own differentiation of Cholesky + eigh (a check, not used to train).
    """
    m = a.shape[-1]
    if num_modes < 1 or num_modes > m:
        raise ValueError(f"num_modes K = {num_modes} is not allowed for {m} unknowns; "
                         f"1 <= K <= {m}")
    if grad == "unrolled":
        return _dense_eigenpairs(a, b, num_modes)
    if grad not in GRADS:
        raise ValueError(f"grad = {grad!r} is not one of {GRADS}")
    if (num_modes, grad) not in _SOLVERS:
        _SOLVERS[(num_modes, grad)] = _make_solver(num_modes, grad)
    return _SOLVERS[(num_modes, grad)](a, b)


def solve(p: jax.Array, q: jax.Array, w: jax.Array, length: jax.Array, num_modes: int, *,
          mass: str = "lumped", grad: str = "implicit") -> tuple[jax.Array, jax.Array]:
    """Eigenvalues (K,) and eigenfunctions at all N nodes (N, K) (zero at both ends,
    ∫ u_i u_j w ≈ δ_ij in the discretisation's inner product) of (SL) on [0, length].

    p, q, w: (N,) nodal coefficient values; checked (`check_problem`) when concrete.
    """
    if grad not in GRADS:
        raise ValueError(f"grad = {grad!r} is not one of {GRADS}")
    if mass not in MASS_KINDS:
        raise ValueError(f"mass = {mass!r} is not one of {MASS_KINDS}")
    check_problem(p, w, num_modes)
    a, b = assemble(p, q, w, length, mass)
    eig = eigenpairs(a, b, num_modes, grad)
    zero = jnp.zeros((1, num_modes), eig.vectors.dtype)
    return eig.values, jnp.concatenate([zero, eig.vectors, zero], axis=0)


def mass_matrix(w: jax.Array, length: jax.Array, mass: str = "lumped") -> jax.Array:
    """The interior mass matrix B (M, M): eigenfunctions u satisfy uᵀ B u = δ (w-orthonormality)."""
    return assemble(jnp.ones_like(w), jnp.zeros_like(w), w, length, mass)[1]
