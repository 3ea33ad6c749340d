"""Pseudo-spectral ETDRK4 Burgers: Cole–Hopf closed form, linear decay, agreement with FD4 + RK4,
the step check and its constant, the mean of u and v."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet.front import resample
from lib.pde import burgers, burgers_spectral, trajectory
from lib.pde.spectral import grid_points_2d
from tests.pde.helpers import advance, observed_orders

NU = 0.005
TWO_PI = 2 * np.pi


def _cole_hopf(n, t, a=1.0, b=0.5):
    """u = −2ν ∂x log φ for φ = a + b e^{−νk²t} cos(kx), k = 2π; v = 0; shape (2, n, n)."""
    x, _ = grid_points_2d(n, 1.0)
    decay = b * np.exp(-NU * TWO_PI**2 * t)
    u = 2 * NU * TWO_PI * decay * np.sin(TWO_PI * x) / (a + decay * np.cos(TWO_PI * x))
    return np.stack([u, np.zeros_like(u)])


def _cole_hopf_error(n, n_steps, t_end=0.5):
    # |u| <= 0.037 for a = 1, b = 0.5: the advective limit is far above these steps
    step = burgers_spectral.make_step(n, t_end / n_steps, NU, max_velocity=0.1)
    final = advance(step, jnp.asarray(_cole_hopf(n, 0.0)), n_steps)
    return float(np.abs(np.asarray(final) - _cole_hopf(n, t_end)).max())


def test_cole_hopf_solution_converges_spectrally_in_space_and_to_fourth_order_in_time():
    with jax.enable_x64(True):
        # Over [0, 0.5] u moves by 4.8e-3, of which 1.8e-3 is the nonlinear term's (the
        # distance to the heat equation's solution): both far above the errors asserted.
        in_space = [_cole_hopf_error(n, 80) for n in (16, 32, 64)]  # 2.5e-5, 2.2e-8, 4e-14
        in_time = [_cole_hopf_error(64, m) for m in (10, 20, 40)]  # 1.7e-10, 1.1e-11, 7e-13
    assert in_space[1] < 1e-7, in_space
    # Faster than any fixed order: each halving of the grid spacing gains > 2^9.
    assert np.all(observed_orders(in_space) > 9), (in_space, observed_orders(in_space))
    orders = observed_orders(in_time)
    assert np.all(orders > 3.8) and np.all(orders < 4.3), (in_time, orders)


def test_small_fourier_mode_decays_at_the_viscous_rate():
    n, t_end, eps = 32, 0.5, 1e-4
    p, q = 3, -2  # within the 2/3 band (|p|, |q| < 32/3)
    x, y = grid_points_2d(n, 1.0)
    theta = TWO_PI * (p * x + q * y)
    state0 = eps * np.stack([np.sin(theta), 0.5 * np.cos(theta)])
    with jax.enable_x64(True):
        step = burgers_spectral.make_step(n, 0.01, NU)
        final = np.asarray(advance(step, jnp.asarray(state0), 50))
    decay = np.exp(-NU * TWO_PI**2 * (p**2 + q**2) * t_end)  # exp(−ν|k|²t) = 0.277
    # the quadratic term adds a 2k harmonic of O(eps · |k| t) relative size: 9e-5 · eps measured;
    # a 1 % error in ν|k|² would be 3.5e-3 · eps
    np.testing.assert_allclose(final, decay * state0, rtol=0, atol=5e-4 * eps)


@pytest.fixture(scope="module")
def random_ic_runs():
    """A dataset IC (seed 0, max |u| 1.78) run to t = 0.5: FD4 + RK4 and spectral at 128²,
    both at 32² from the 128² IC's spectral truncation (exact: its modes are |k| <= 5).
    Float32 (the dataset's dtype): the differences asserted are >= 1e-4."""
    fine0 = burgers.random_initial_state(jax.random.key(0), 128)
    coarse0 = jnp.asarray(_resample(np.asarray(fine0), 32))
    runs = {
        "initial": fine0,
        "fd_128": advance(burgers.make_step(128, 2.5e-3, NU), fine0, 200),
        "spectral_128": advance(burgers_spectral.make_step(128, 2.5e-3, NU), fine0, 200),
        "fd_32": advance(burgers.make_step(32, 0.01, NU), coarse0, 50),
        "spectral_32": advance(burgers_spectral.make_step(32, 0.01, NU), coarse0, 50),
    }
    return {name: np.asarray(u, np.float64) for name, u in runs.items()}


def _resample(state, m):
    """`front.resample` (channels-last) on a `(2, n, n)` state."""
    return np.moveaxis(resample(np.moveaxis(state, 0, -1), m), -1, 0)


def test_agrees_with_fd4_at_128_and_beats_it_at_32(random_ic_runs):
    r = random_ic_runs
    assert np.abs(r["spectral_128"] - r["fd_128"]).max() < 5e-4  # 1.8e-4 measured
    reference = _resample(r["fd_128"], 32)  # the dataset's own solver as truth
    fd_error = np.abs(r["fd_32"] - reference).max()  # 2.9e-2
    spectral_error = np.abs(r["spectral_32"] - reference).max()  # 3.5e-3
    assert spectral_error < fd_error / 3, (spectral_error, fd_error)


def test_time_step_above_the_advective_limit_is_rejected():
    limit = burgers_spectral.max_stable_dt(32, NU, 2.0)  # 0.675 / 32 / 2 = 0.01055
    burgers_spectral.make_step(32, limit)
    with pytest.raises(ValueError, match=r"dt = 0\.011 is above the CFL limit 0\.0105506"):
        burgers_spectral.make_step(32, 0.011)
    with pytest.raises(ValueError, match="viscosity"):
        burgers_spectral.make_step(32, 1e-3, viscosity=-0.005)


def test_advective_limit_is_sharp_for_a_uniform_flow():
    # About a uniform flow (U, V) = (M, M) the perturbation's modes advect at speed M along
    # both axes; with ν = 0 the corner mode of the 2/3 band is stable just up to the limit
    # (its wavenumber 2π·10 at n = 32 is 6 % inside the bound 2π·32/3).
    n, speed = 32, 2.0
    limit = burgers_spectral.max_stable_dt(n, 0.0, speed)
    growth = {}
    with jax.enable_x64(True):
        noise = 1e-8 * jax.random.normal(jax.random.key(3), (2, n, n), jnp.float64)
        for factor in (0.9, 1.1):
            # a max_velocity below the flow's lets make_step accept the step 10 % above
            max_velocity = speed / factor * (1 - 1e-12)
            step = burgers_spectral.make_step(n, factor * limit, 0.0, max_velocity)
            final = advance(step, speed + noise, 100)
            growth[factor] = float(jnp.abs(final - speed).max() / jnp.abs(noise).max())
    assert growth[0.9] < 2 and growth[1.1] > 1e3, growth  # 0.51 and 4e8 measured


def test_dataset_initial_conditions_stay_bounded_just_below_the_limit():
    # Viscous Burgers keeps each component within its initial range (maximum principle).
    keys = jax.random.split(jax.random.key(1), 8)
    for n in (16, 32):
        states = jax.vmap(lambda k: burgers.random_initial_state(k, n))(keys)
        dt = 0.9 * burgers_spectral.max_stable_dt(n, NU, 2.0)
        n_steps = int(np.ceil(2.0 / dt))
        step = burgers_spectral.make_step(n, dt, NU)
        run = jax.jit(jax.vmap(lambda s: trajectory.simulate(s, step, n_steps, n_steps)))(states)
        assert np.all(np.asarray(run.blowup_step) == -1)
        initial_max = jnp.abs(states).max(axis=(1, 2, 3))
        assert np.all(np.asarray(jnp.abs(run.final_state).max(axis=(1, 2, 3)) <= initial_max))


def test_mean_is_conserved_for_curl_free_flow_and_drifts_as_the_pde_otherwise(random_ic_runs):
    # d/dt ∫u = −∫ v ∂y u and d/dt ∫v = −∫ u ∂x v: zero when ∂y u = ∂x v, not in general.
    n = 32
    x, y = grid_points_2d(n, 1.0)
    # (u, v) = (0.3, −0.2) + ∇ψ, ψ = 0.03 sin(2π(x + 2y)) + 0.02 cos(2π(3x − y))
    c1, s2 = np.cos(TWO_PI * (x + 2 * y)), np.sin(TWO_PI * (3 * x - y))
    u = 0.3 + TWO_PI * (0.03 * c1 - 0.06 * s2)
    v = -0.2 + TWO_PI * (0.06 * c1 + 0.02 * s2)
    with jax.enable_x64(True):
        step = burgers_spectral.make_step(n, 0.01, NU)
        final = np.asarray(advance(step, jnp.asarray(np.stack([u, v])), 50))
    # the fields change by up to 0.6; the means by 6e-17
    np.testing.assert_allclose(final.mean(axis=(1, 2)), [0.3, -0.2], rtol=0, atol=1e-13)
    # The dataset's ICs have independent u and v: the means move, as the fine FD4 run's do.
    r = random_ic_runs
    start = r["initial"].mean(axis=(1, 2))
    fd_drift = r["fd_128"].mean(axis=(1, 2)) - start
    spectral_drift = r["spectral_32"].mean(axis=(1, 2)) - start
    assert np.all(np.abs(fd_drift) > 1e-3), fd_drift
    np.testing.assert_allclose(spectral_drift, fd_drift, rtol=0.02)  # 0.1 %, 0.3 %
