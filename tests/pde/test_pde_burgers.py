"""Burgers solver: FD order, RK4 order, agreement across resolutions, the P2C2Net initial condition."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.pde import burgers, finite_differences as fd
from lib.pde.spectral import grid_points_2d
from tests.pde.helpers import advance, observed_orders


def test_finite_differences_are_fourth_order():
    errors = {"first": [], "second": []}
    for n in (32, 64, 128):
        with jax.enable_x64(True):
            x, y = grid_points_2d(n, 1.0)
            f = jnp.asarray(np.sin(2 * np.pi * x) * np.exp(np.cos(2 * np.pi * y)))
            dx = 1.0 / n
            df_dx = 2 * np.pi * np.cos(2 * np.pi * x) * np.exp(np.cos(2 * np.pi * y))
            lap = -4 * np.pi**2 * np.asarray(f) + np.sin(2 * np.pi * x) * 4 * np.pi**2 * (
                np.sin(2 * np.pi * y) ** 2 - np.cos(2 * np.pi * y)
            ) * np.exp(np.cos(2 * np.pi * y))
            errors["first"].append(float(jnp.abs(fd.first_derivative(f, dx, -1) - df_dx).max()))
            errors["second"].append(float(jnp.abs(fd.laplacian(f, dx) - lap).max()))
    for name, e in errors.items():
        np.testing.assert_allclose(observed_orders(e), 4.0, atol=0.15, err_msg=name)


def test_rk4_time_stepping_is_fourth_order():
    with jax.enable_x64(True):
        state0 = burgers.random_initial_state(jax.random.key(0), 32, dtype=jnp.float64)
        t_end = 0.1
        reference = advance(burgers.make_step(32, t_end / 400), state0, 400)
        errors = [
            float(jnp.abs(advance(burgers.make_step(32, t_end / m), state0, m) - reference).max())
            for m in (25, 50, 100)
        ]
    orders = observed_orders(errors)
    assert np.all(orders > 3.8) and np.all(orders < 4.3), (errors, orders)


def test_two_resolutions_agree_to_fourth_order():
    # A smooth initial condition run at n = 16, 32, 64 against n = 128 (same dt, t = 0.1);
    # the coarse grid points are every (128/n)-th point of the fine grid.
    def initial(n):
        x, y = grid_points_2d(n, 1.0)
        u = 0.5 * np.sin(2 * np.pi * x) + 0.3 * np.cos(2 * np.pi * y)
        v = 0.4 * np.cos(2 * np.pi * x) * np.sin(2 * np.pi * y)
        return jnp.asarray(np.stack([u, v]))

    with jax.enable_x64(True):
        results = {
            n: np.asarray(advance(burgers.make_step(n, 1e-3), initial(n), 100)) for n in (16, 32, 64, 128)
        }
    errors = [np.abs(results[n] - results[128][:, :: 128 // n, :: 128 // n]).max() for n in (16, 32, 64)]
    orders = observed_orders(errors)
    assert errors[-1] < 1e-5 and np.all(orders > 3.6), (errors, orders)


def test_random_initial_condition_is_the_p2c2net_fourier_series():
    n, key = 32, jax.random.key(7)
    state = burgers.random_initial_state(key, n)
    # The same draw, evaluated term by term as in P2C2Net's dataGen.py.
    key_coef, key_mean = jax.random.split(key)
    a, b = np.asarray(jax.random.normal(key_coef, (2, 2, 10, 10)))
    c = -1.0 + np.asarray(jax.random.normal(key_mean, (2, 1, 1)))
    x, y = grid_points_2d(n, 1.0)
    w = np.zeros((2, n, n))
    for p in range(10):
        for q in range(10):
            theta = 2 * np.pi * ((p - 5) * x + (q - 5) * y)
            w += a[:, p, q, None, None] * np.sin(theta) + b[:, p, q, None, None] * np.cos(theta)
    expected = (2 * w / w.max(axis=(1, 2), keepdims=True) + c) / 3
    np.testing.assert_allclose(state, expected, atol=2e-5)


def test_time_step_above_the_stability_limit_is_rejected():
    burgers.make_step(128, 1e-3)
    with pytest.raises(ValueError, match="stability"):
        burgers.make_step(256, 1e-3)  # diffusion limit ≈ 8e-4 at n = 256
    with pytest.raises(ValueError, match="viscosity"):
        burgers.make_step(64, 1e-3, viscosity=-0.005)
