"""ETDRK4 coefficients (contour integrals) and the classical RK4 integrator."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.pde import etdrk4
from lib.pde.integrators import make_stepper


def test_contour_coefficients_match_closed_forms():
    dt = 0.3
    z = np.array([-50.0, -3.0, -1.5, 2.0, 0.0])
    c = etdrk4.etdrk4_coefficients(z / dt, dt)
    zz = z[:-1]
    np.testing.assert_allclose(c.q[:-1], dt * (np.exp(zz / 2) - 1) / zz, rtol=1e-12)
    np.testing.assert_allclose(
        c.f1[:-1], dt * (-4 - zz + np.exp(zz) * (4 - 3 * zz + zz**2)) / zz**3, rtol=1e-10
    )
    np.testing.assert_allclose(c.f2[:-1], dt * (2 + zz + np.exp(zz) * (zz - 2)) / zz**3, rtol=1e-10)
    np.testing.assert_allclose(
        c.f3[:-1], dt * (-4 - 3 * zz - zz**2 + np.exp(zz) * (4 - zz)) / zz**3, rtol=1e-10
    )
    # z -> 0 limits: q = h/2, f1 = f2 = f3 = h/6 (the RK4 weights).
    np.testing.assert_allclose([c.q[-1], c.f1[-1], c.f2[-1], c.f3[-1]], [dt / 2] + [dt / 6] * 3, rtol=1e-13)


def test_etdrk4_is_fourth_order_on_a_stiff_scalar_ode():
    # u' = -20 u + cos(u): linear part exact, nonlinear part 4th order.
    lam = np.array([-20.0])

    def solve(n_steps):
        step = etdrk4.make_etdrk4_step(lam, jnp.cos, 1.0 / n_steps)
        return jax.lax.fori_loop(0, n_steps, lambda _, u: step(u), jnp.array([1.0 + 0j]))

    with jax.enable_x64(True):
        ref = solve(4096)
        errors = [abs(complex(solve(m)[0] - ref[0])) for m in (8, 16, 32)]
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert np.all(orders > 3.7), (errors, orders)


def test_rk4_integrator_is_fourth_order():
    step = make_stepper(lambda t, y, args: -y + jnp.sin(t))
    exact = lambda t: 1.5 * np.exp(-t) + 0.5 * (np.sin(t) - np.cos(t))  # y(0) = 1

    def error(n):
        with jax.enable_x64(True):
            y = jax.lax.fori_loop(0, n, lambda i, y: step(y, i / n, 1.0 / n), jnp.float64(1.0))
        return abs(float(y) - exact(1.0))

    errors = [error(n) for n in (10, 20, 40)]
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    np.testing.assert_allclose(orders, 4.0, atol=0.15)
