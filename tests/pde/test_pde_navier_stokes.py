"""Kolmogorov-flow solver: closed forms, convergence order, energy budget, input checks."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.pde import checks, navier_stokes as ns, trajectory
from lib.pde.spectral import grid_points_2d
from tests.pde.helpers import advance, observed_orders


@pytest.mark.parametrize("length", [2 * np.pi, 4 * np.pi])
def test_taylor_green_vortex_decays_at_the_analytic_rate(length):
    n, nu, k, t_end = 32, 0.05, 2 * (2 * np.pi / length), 1.0
    x, y = grid_points_2d(n, length)
    omega0 = 2 * k * np.sin(k * x) * np.sin(k * y)  # u = sin kx cos ky, v = -cos kx sin ky
    dt = t_end / 50
    step = ns.make_step(n, dt, length=length, viscosity=nu, drag=0.0, forcing_scale=0.0)
    omega = advance(step, jnp.asarray(omega0[None], jnp.float32), 50)
    expected = omega0 * np.exp(-2 * nu * k**2 * t_end)
    np.testing.assert_allclose(omega[0], expected, atol=1e-5 * np.abs(omega0).max())


def test_advection_term_matches_the_closed_form():
    # ψ = sin x + sin 2y: u = 2 cos 2y, v = -cos x, ω = sin x + 4 sin 2y,
    # u·∇ω = 2 cos 2y cos x - 8 cos x cos 2y = -6 cos x cos 2y.
    x, y = grid_points_2d(32, 2 * np.pi)
    omega = jnp.asarray(np.sin(x) + 4 * np.sin(2 * y))
    np.testing.assert_allclose(ns.advection(omega), -6 * np.cos(x) * np.cos(2 * y), atol=2e-5)
    velocity = ns.vorticity_to_velocity(omega)
    np.testing.assert_allclose(velocity[0], 2 * np.cos(2 * y), atol=1e-5)
    np.testing.assert_allclose(velocity[1], -np.cos(x), atol=1e-5)


def test_velocity_vorticity_round_trip_and_divergence_free():
    omega = ns.random_initial_state(jax.random.key(3), 32)[0]
    velocity = ns.vorticity_to_velocity(omega)
    np.testing.assert_allclose(ns.velocity_to_vorticity(velocity), omega, atol=1e-4)
    k = np.fft.fftfreq(32, 1 / 32)
    div_hat = 1j * k[None, :] * jnp.fft.fft2(velocity[0]) + 1j * k[:, None] * jnp.fft.fft2(velocity[1])
    assert float(jnp.abs(div_hat).max()) < 1e-3 * float(jnp.abs(jnp.fft.fft2(omega)).max())


@pytest.mark.parametrize("length", [2 * np.pi, 4 * np.pi])
def test_random_initial_state_has_the_requested_max_speed_and_peak(length):
    n = 64
    omega = ns.random_initial_state(jax.random.key(0), n, length=length, max_velocity=7.0)
    speed = jnp.linalg.norm(ns.vorticity_to_velocity(omega[0], length), axis=0)
    np.testing.assert_allclose(float(speed.max()), 7.0, rtol=1e-5)
    # The velocity energy spectrum (summed over shells, averaged over seeds) peaks near k = 4.
    omegas = jax.jit(jax.vmap(lambda key: ns.random_initial_state(key, n, length=length)[0]))(
        jax.random.split(jax.random.key(1), 16)
    )
    u_hat = jnp.fft.fft2(ns.vorticity_to_velocity(omegas, length))
    energy = jnp.sum(jnp.abs(u_hat) ** 2, axis=(0, 1))
    kk = 2 * np.pi / length * np.fft.fftfreq(n, 1 / n)
    shell = np.rint(np.hypot(kk[None, :], kk[:, None])).astype(int)
    spectrum = np.bincount(shell.ravel(), np.asarray(energy).ravel())
    assert abs(int(np.argmax(spectrum)) - 4) <= 1


def test_time_integrator_is_fourth_order():
    with jax.enable_x64(True):
        omega0 = ns.random_initial_state(jax.random.key(0), 32, dtype=jnp.float64)
        t_end = 0.2
        reference = advance(ns.make_step(32, t_end / 256), omega0, 256)
        errors = [
            float(jnp.abs(advance(ns.make_step(32, t_end / m), omega0, m) - reference).max())
            for m in (8, 16, 32)
        ]
    orders = observed_orders(errors)
    assert np.all(orders > 3.7) and np.all(orders < 4.5), (errors, orders)


def test_energy_budget_with_forcing_and_drag():
    # dE/dt = <u·f> - 2 α E - ν <ω²>, with E = <|u|²>/2 and f = sin(4y) x̂.
    n, length, nu, alpha = 32, 2 * np.pi, 0.01, 0.1
    with jax.enable_x64(True):
        omega0 = ns.random_initial_state(jax.random.key(2), n, max_velocity=2.0, dtype=jnp.float64)
        dt, n_steps = 0.01, 100
        step = ns.make_step(n, dt, viscosity=nu, drag=alpha, max_velocity=2.0)
        run = trajectory.simulate(omega0, step, n_steps, 1)
        omegas = jnp.concatenate([omega0[None], run.frames])[:, 0]
        velocity = ns.vorticity_to_velocity(omegas)
    _, y = grid_points_2d(n, length)
    energy = 0.5 * np.mean(np.sum(np.asarray(velocity) ** 2, axis=1), axis=(1, 2))
    power = np.mean(np.asarray(velocity[:, 0]) * np.sin(4 * y), axis=(1, 2))
    dissipation = 2 * alpha * energy + nu * np.mean(np.asarray(omegas) ** 2, axis=(1, 2))
    rate = power - dissipation
    # Simpson's rule over the saved steps.
    integral = dt / 3 * (rate[0] + rate[-1] + 4 * rate[1:-1:2].sum() + 2 * rate[2:-1:2].sum())
    change = energy[-1] - energy[0]
    assert abs(change) > 0.05 * energy[0]  # the budget is not trivially balanced
    np.testing.assert_allclose(change, integral, rtol=1e-6)


def test_runs_in_float32_by_default_and_is_vmappable():
    keys = jax.random.split(jax.random.key(0), 3)
    omega0 = jax.jit(jax.vmap(lambda k: ns.random_initial_state(k, 32)))(keys)
    step = ns.make_step(32, 0.01)
    out = jax.jit(jax.vmap(step))(omega0)
    assert out.shape == (3, 1, 32, 32) and out.dtype == jnp.float32
    np.testing.assert_allclose(out[1], jax.jit(step)(omega0[1]), atol=1e-4)


def test_stable_time_step_and_cfl_check():
    dx = 2 * np.pi / 64
    assert np.isclose(checks.stable_time_step(7.0, 0.5, dx), 0.5 * dx / 7.0)
    ns.make_step(64, checks.stable_time_step(7.0, ns.MAX_CFL, dx))  # at the limit: accepted
    with pytest.raises(ValueError, match="above the CFL limit"):
        ns.make_step(64, 1.01 * checks.stable_time_step(7.0, ns.MAX_CFL, dx))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(viscosity=-1e-3), "viscosity"),
        (dict(drag=-0.1), "drag"),
        (dict(n=31), "grid size"),
        (dict(dt=0.0), "dt"),
    ],
)
def test_bad_input_is_a_value_error(kwargs, match):
    args = dict(n=32, dt=0.01) | kwargs
    with pytest.raises(ValueError, match=match):
        ns.make_step(**args)
