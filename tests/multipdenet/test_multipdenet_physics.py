"""Physics Block right-hand sides with frozen (4th-order FD) filters against closed forms."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import physics
from lib.multipdenet.filters import DerivativeFilters1D, DerivativeFilters2D


def _grid(n: int, length: float = 2 * np.pi):
    h = length / n
    g = np.arange(n) * h
    x, y = np.meshgrid(g, g, indexing="xy")
    return x, y, h


def _frozen_derivatives(u: np.ndarray, h: float):
    model = DerivativeFilters2D(h=h, mode="frozen")
    return model.apply({}, jnp.asarray(u, jnp.float32))


def _burgers_error(n: int) -> float:
    x, y, h = _grid(n)
    u = np.sin(x) * np.cos(y) + 0.5
    v = np.cos(2 * x + y)
    state = np.stack([u, v], -1)
    ux, uy = np.cos(x) * np.cos(y), -np.sin(x) * np.sin(y)
    vx, vy = -2 * np.sin(2 * x + y), -np.sin(2 * x + y)
    lap_u, lap_v = -2 * np.sin(x) * np.cos(y), -5 * np.cos(2 * x + y)
    nu = 0.05
    exact = np.stack([nu * lap_u - (u * ux + v * uy), nu * lap_v - (u * vx + v * vy)], -1)
    got = physics.burgers_rhs(jnp.asarray(state, jnp.float32), _frozen_derivatives(state, h), viscosity=nu)
    return float(np.abs(np.asarray(got) - exact).max())


def test_burgers_rhs_matches_analytic_to_fourth_order():
    e16, e32 = _burgers_error(16), _burgers_error(32)
    assert e32 < 3e-3  # leading term: v v_y with h⁴ k⁵/30 ≈ 1.6e-3 for k = 2
    assert 3.5 < np.log2(e16 / e32) < 4.5, (e16, e32)


def test_burgers_advects_with_uncorrected_velocity():
    """With derivatives of ũ = 2u, the advection is u·∇ũ (not ũ·∇ũ) and diffusion ν∇²ũ."""
    x, y, h = _grid(16)
    state = np.stack([np.sin(x), np.cos(y)], -1)
    d = _frozen_derivatives(2 * state, h)
    d_plain = _frozen_derivatives(state, h)
    got = physics.burgers_rhs(jnp.asarray(state, jnp.float32), d, viscosity=0.1)
    want = 2 * physics.burgers_rhs(jnp.asarray(state, jnp.float32), d_plain, viscosity=0.1)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_gray_scott_rhs_closed_form():
    x, y, h = _grid(32, length=2.5)
    k = 2 * np.pi / 2.5
    a = 1 - 0.2 * np.sin(k * x)
    b = 0.25 + 0.1 * np.cos(k * y)
    state = np.stack([a, b], -1)
    du, dv, feed, kill = 2e-3, 1e-3, 0.04, 0.06
    exact_a = du * 0.2 * k**2 * np.sin(k * x) - a * b**2 + feed * (1 - a)
    exact_b = -dv * 0.1 * k**2 * np.cos(k * y) + a * b**2 - (feed + kill) * b
    got = physics.gray_scott_rhs(jnp.asarray(state, jnp.float32), _frozen_derivatives(state, h), du, dv, feed, kill)
    np.testing.assert_allclose(got, np.stack([exact_a, exact_b], -1), atol=1e-5)


def test_kdv_rhs_closed_form():
    n, length = 32, 2 * np.pi
    h = length / n
    x = np.arange(n) * h
    u = (np.sin(x) + 0.3)[:, None]
    model = DerivativeFilters1D(h=h, mode="frozen")
    d = model.apply({}, jnp.asarray(u, jnp.float32))
    got = physics.kdv_rhs(jnp.asarray(u, jnp.float32), d, nonlinear_coefficient=6.0, dispersion=1.0)
    exact = -6 * u[:, 0] * np.cos(x) + np.cos(x)
    # truncation ≈ 6·1.3·h⁴/30 + 7h⁴/120 ≈ 4e-4 at h = 2π/32; float32 round-off of u_xxx ≈ 5e-5
    np.testing.assert_allclose(got[:, 0], exact, atol=1e-3)
    assert float(jnp.abs(got[:, 0] - exact).max()) > 1e-5  # it is a finite difference, not exact


def test_poisson_solve_inverts_laplacian():
    x, y, h = _grid(16)
    p = np.cos(2 * x) * np.sin(3 * y) + 0.5 * np.sin(x - y)
    lap = -13 * np.cos(2 * x) * np.sin(3 * y) - np.sin(x - y)
    got = physics.solve_poisson(jnp.asarray(lap + 7.0, jnp.float32), h)  # the mean is dropped
    np.testing.assert_allclose(got, p, atol=1e-5)


def test_spectral_gradient_and_divergence_closed_form():
    x, y, h = _grid(16)
    p = np.sin(2 * x + y)
    grad = physics.spectral_gradient(jnp.asarray(p, jnp.float32), h)
    np.testing.assert_allclose(grad, np.stack([2 * np.cos(2 * x + y), np.cos(2 * x + y)], -1), atol=1e-5)
    np.testing.assert_allclose(physics.spectral_divergence(grad, h), -5 * p, atol=1e-4)


def _divergence_free_field(n: int, key) -> np.ndarray:
    """`(u, v) = (∂y ψ, −∂x ψ)` of a random low-mode streamfunction, exactly (spectrally) div-free."""
    x, y, h = _grid(n)
    coef = np.asarray(jax.random.normal(key, (3, 3, 2)))
    psi_y, psi_x = 0.0, 0.0
    for p in range(3):
        for q in range(3):
            phase = p * x + q * y
            a, b = coef[p, q]
            psi_y = psi_y + q * (a * np.cos(phase) - b * np.sin(phase))
            psi_x = psi_x + p * (a * np.cos(phase) - b * np.sin(phase))
    return np.stack([psi_y, -psi_x], -1), h


def test_navier_stokes_rhs_is_divergence_free():
    u, h = _divergence_free_field(32, jax.random.key(0))
    u = jnp.asarray(u, jnp.float32)
    d = _frozen_derivatives(u, h)
    rhs = physics.navier_stokes_rhs(u, d, h, viscosity=1e-2)
    advection = u[..., 0:1] * d.x + u[..., 1:2] * d.y
    scale = float(jnp.abs(physics.spectral_divergence(advection, h)).max())
    assert scale > 1.0  # the pressure has real work to do
    assert float(jnp.abs(physics.spectral_divergence(u, h)).max()) < 1e-4 * scale
    assert float(jnp.abs(physics.spectral_divergence(rhs, h)).max()) < 1e-4 * scale


def test_navier_stokes_taylor_green_pressure_balances_advection():
    """Taylor–Green: (u·∇)u = −∇p, so without forcing and drag ∂t u = ν∇²u = −2ν u."""
    x, y, h = _grid(32)
    u = np.stack([np.sin(x) * np.cos(y), -np.cos(x) * np.sin(y)], -1)
    d = _frozen_derivatives(u, h)
    nu = 0.1
    rhs = physics.navier_stokes_rhs(jnp.asarray(u, jnp.float32), d, h, viscosity=nu, drag=0.0, forcing_scale=0.0)
    np.testing.assert_allclose(rhs, -2 * nu * u, atol=5e-5)


def test_kolmogorov_laminar_flow_is_steady():
    """u = A sin(4y) x̂ with A (16ν + α) = 1 balances forcing, drag and viscosity."""
    x, y, h = _grid(32)
    nu, alpha = 0.01, 0.1
    amp = 1.0 / (16 * nu + alpha)
    u = np.stack([amp * np.sin(4 * y), np.zeros_like(y)], -1)
    rhs = physics.navier_stokes_rhs(jnp.asarray(u, jnp.float32), _frozen_derivatives(u, h), h, viscosity=nu, drag=alpha)
    # FD Laplacian error of sin(4y) on 32²: ν A 16 (4h)^4/90 ≈ 5e-3
    assert float(jnp.abs(rhs).max()) < 1e-2
    off = physics.navier_stokes_rhs(jnp.asarray(u, jnp.float32), _frozen_derivatives(u, h), h, viscosity=nu, drag=0.0)
    np.testing.assert_allclose(off[..., 0], alpha * amp * np.sin(4 * y), atol=1e-2)  # the missing drag
