"""KdV solver: soliton speed and shape, conserved quantities, CFL check."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.pde import kdv, trajectory
from lib.pde.spectral import grid_points_1d
from tests.pde.helpers import advance


@pytest.mark.parametrize("speed", [0.5, 2.0])
def test_soliton_travels_at_its_analytic_speed(speed):
    n, length, dt, n_steps = 128, kdv.LENGTH, 0.01, 500
    x = grid_points_1d(n, length)
    u0 = kdv.soliton(x, speed, position=8.0)
    u = advance(kdv.make_step(n, dt), jnp.asarray(u0[None], jnp.float32), n_steps)[0]
    t_end = dt * n_steps
    # Shift from the phase of the first Fourier mode: u(x - s) has û₁ multiplied by e^{-i k₁ s}.
    k1 = 2 * np.pi / length
    shift = -np.angle(np.fft.rfft(np.asarray(u))[1] / np.fft.rfft(u0)[1]) / k1
    measured_speed = (shift % length) / t_end
    np.testing.assert_allclose(measured_speed, speed, rtol=2e-4)
    exact = kdv.soliton(x, speed, position=8.0, t=t_end)
    np.testing.assert_allclose(u, exact, atol=1e-4 * speed)


def test_soliton_in_the_scaled_form_with_dispersion_delta():
    # u_t + u u_x + δ u_xxx = 0 (MultiPDENet's form): soliton 3c sech²(√(c/δ)/2 ξ).
    n, length, delta, speed = 256, 16.0, 0.1, 1.0
    x = grid_points_1d(n, length)
    shape = dict(length=length, nonlinear_coefficient=1.0, dispersion=delta)
    u0 = kdv.soliton(x, speed, 5.0, **shape)
    step = kdv.make_step(n, 0.01, max_amplitude=3.0, **shape)
    u = advance(step, jnp.asarray(u0[None], jnp.float32), 300)[0]
    exact = kdv.soliton(x, speed, 5.0, t=3.0, **shape)
    np.testing.assert_allclose(u, exact, atol=1e-3 * 3 * speed)


def test_mass_and_momentum_are_conserved_through_collisions():
    # In float64 (in float32 the rounding of |e^{i k³ dt}| ≠ 1 drifts ∫u² by ~1e-7 a step).
    with jax.enable_x64(True):
        u0 = kdv.random_initial_state(jax.random.key(4), 128, n_solitons=3, dtype=jnp.float64)
        run = trajectory.simulate(u0, kdv.make_step(128, 0.01), 1000, 100)
        frames = np.asarray(run.frames[:, 0])
        assert int(run.blowup_step) == -1
    initial = np.asarray(u0[0])
    np.testing.assert_allclose(frames.mean(axis=1), initial.mean(), rtol=1e-12)
    np.testing.assert_allclose((frames**2).mean(axis=1), (initial**2).mean(), rtol=1e-6)


def test_time_step_above_the_cfl_limit_is_rejected():
    with pytest.raises(ValueError, match="above the CFL limit"):
        kdv.make_step(128, dt=0.05)
