"""Sturm–Liouville solver: closed-form eigenpairs, convergence order, w-orthonormality,
implicit gradients vs finite differences, bad-input errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.dsl import sturm_liouville as sl


# one compiled program per call signature instead of many eagerly dispatched small ops
solve = jax.jit(sl.solve, static_argnums=4, static_argnames=("mass", "grad"))


def _const(n, dtype=jnp.float32):
    return jnp.ones(n, dtype), jnp.zeros(n, dtype), jnp.ones(n, dtype)


@pytest.fixture
def x64():
    """Double precision for the order checks (float32 round-off in λ_1 is ~1e-4 relative)."""
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("mass", sl.MASS_KINDS)
def test_constant_coefficients_match_closed_form_at_second_order(mass, x64):
    """p = w = 1, q = 0 on [0, L]: λ_k → (kπ/L)², u_k ∝ sin(kπt/L); error ratio ≈ 4 per halving."""
    length, k = 2.0, 4
    exact = (np.arange(1, k + 1) * np.pi / length) ** 2
    errs = []
    for n in (33, 65):
        lam, u = solve(*_const(n, jnp.float64), length, k, mass=mass)
        errs.append(np.abs(np.asarray(lam) - exact) / exact)
        t = np.linspace(0, length, n)
        for i in range(k):
            ref = np.sin((i + 1) * np.pi * t / length)      # positive slope at t = 0
            got = np.asarray(u[:, i])
            # nodal values are exact sines for both mass matrices (Toeplitz eigenvectors) ...
            np.testing.assert_allclose(got / np.linalg.norm(got), ref / np.linalg.norm(ref),
                                       atol=1e-10)
            # ... and ∫ u² w ≈ 1 up to the O(h²) difference of the discrete inner product
            l2 = np.sum(got ** 2) * length / (n - 1)
            assert abs(l2 - 1) < (1e-12 if mass == "lumped" else ((i + 1) * np.pi / (n - 1)) ** 2)
        assert np.all(np.asarray(u[0]) == 0) and np.all(np.asarray(u[-1]) == 0)
    ratio = errs[0] / errs[1]
    assert np.all((ratio > 3.5) & (ratio < 4.5)), ratio
    # lumped mass converges from below, consistent mass from above (discretisation order 2)
    lam, _ = solve(*_const(33, jnp.float64), length, k, mass=mass)
    sign = -1 if mass == "lumped" else 1
    assert np.all(sign * (np.asarray(lam) - exact) > 0)
    if mass == "lumped":   # the three-point scheme's exact discrete eigenvalues
        h = length / 32
        disc = 4 / h ** 2 * np.sin(np.arange(1, k + 1) * np.pi * h / (2 * length)) ** 2
        np.testing.assert_allclose(np.asarray(lam), disc, rtol=1e-10)


@pytest.mark.parametrize("mass", sl.MASS_KINDS)
def test_eigenfunctions_are_w_orthonormal_and_sturm_ordered(mass):
    n, k = 40, 6
    t = jnp.linspace(0, 1, n)
    p, q, w = 1 + 0.5 * jnp.sin(3 * t), 2 * jnp.cos(t), 0.5 + t ** 2
    lam, u = solve(p, q, w, 1.3, k, mass=mass)
    b = sl.mass_matrix(w, 1.3, mass)
    gram = u[1:-1].T @ b @ u[1:-1]
    np.testing.assert_allclose(np.asarray(gram), np.eye(k), atol=2e-5)
    assert np.all(np.diff(np.asarray(lam)) > 0)
    # Sturm oscillation: u_k has k − 1 interior sign changes
    signs = np.sign(np.asarray(u[1:-1]))
    assert [int(np.sum(signs[1:, i] != signs[:-1, i])) for i in range(k)] == list(range(k))


def _loss(p, q, w, length, grad):
    lam, u = sl.solve(p, q, w, length, 3, grad=grad)
    probe = jnp.linspace(-1.0, 1.0, u.shape[0])
    return jnp.sum(lam * jnp.array([1.0, 0.5, 0.25])) + jnp.sum(probe[:, None] * u * u[:, ::-1]) \
        + jnp.sum(u[5] * jnp.array([1.0, -2.0, 3.0]))


def test_implicit_gradients_match_finite_differences(x64):
    if True:
        n = 14
        t = jnp.linspace(0, 1, n, dtype=jnp.float64)
        p, q, w = 1 + 0.3 * jnp.sin(2 * t), jnp.cos(3 * t), 0.8 + 0.4 * t
        args = (p, q, w, jnp.float64(1.7))
        eps = 1e-6
        rng = np.random.default_rng(0)
        grads = {g: jax.jit(jax.grad(_loss, argnums=(0, 1, 2, 3)), static_argnums=4)(*args, g)
                 for g in ("implicit", "spectral")}
        loss = jax.jit(_loss, static_argnums=4)
        for i in range(3):
            direction = [jnp.asarray(rng.normal(size=n)) for _ in range(3)] + [jnp.float64(0.3)]
            plus = [a + eps * d for a, d in zip(args, direction)]
            minus = [a - eps * d for a, d in zip(args, direction)]
            fd = (loss(*plus, "implicit") - loss(*minus, "implicit")) / (2 * eps)
            for g, grad in grads.items():
                dot = sum(jnp.sum(gi * di) for gi, di in zip(grad, direction))
                assert abs(float(dot) - float(fd)) < 1e-6 * max(1.0, abs(float(fd))), (g, dot, fd)


def test_bad_inputs_get_clear_errors():
    n = 10
    p, q, w = _const(n)
    with pytest.raises(ValueError, match="num_modes K = 9 is not allowed.*1 <= K <= 8"):
        sl.solve(p, q, w, 1.0, 9)
    with pytest.raises(ValueError, match="num_modes K = 0"):
        sl.solve(p, q, w, 1.0, 0)
    with pytest.raises(ValueError, match="coefficient p must be finite and > 0"):
        sl.solve(p.at[3].set(0.0), q, w, 1.0, 2)
    with pytest.raises(ValueError, match="coefficient w must be finite and > 0"):
        sl.solve(p, q, w.at[0].set(-1.0), 1.0, 2)
    with pytest.raises(ValueError, match="at least 3 nodes"):
        sl.solve(jnp.ones(2), jnp.zeros(2), jnp.ones(2), 1.0, 1)
    with pytest.raises(ValueError, match="mass = 'spectral'"):
        sl.assemble(p, q, w, 1.0, mass="spectral")
    with pytest.raises(ValueError, match="grad = 'adjoint'"):
        sl.solve(p, q, w, 1.0, 2, grad="adjoint")
