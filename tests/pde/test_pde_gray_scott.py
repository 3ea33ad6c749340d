"""Gray–Scott solver against exact solutions of its linear and reaction parts."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from lib.pde import gray_scott as gs
from lib.pde.spectral import grid_points_2d
from tests.pde.helpers import advance

F, KILL = 0.04, 0.06


def test_uniform_state_follows_the_reaction_ode():
    n, dt, n_steps = 16, 1.0, 40
    state0 = jnp.stack([jnp.full((n, n), 0.6), jnp.full((n, n), 0.3)])
    state = advance(gs.make_step(n, dt, feed=F, kill=KILL), state0, n_steps)

    def rhs(t, y):
        u, v = y
        return [-u * v * v + F * (1 - u), u * v * v - (F + KILL) * v]

    exact = solve_ivp(rhs, (0, dt * n_steps), [0.6, 0.3], rtol=1e-11, atol=1e-12).y[:, -1]
    np.testing.assert_allclose(state[:, 0, 0], exact, atol=2e-6)
    np.testing.assert_allclose(state, np.broadcast_to(exact[:, None, None], state.shape), atol=2e-6)


def test_diffusion_of_u_without_v_is_exact():
    # v = 0: u_t = D_u ∇²u + F(1 − u), so u = 1 + A e^{−(D_u |k|² + F) t} cos(k·x).
    n, length, d_u = 32, gs.LENGTH, 2e-5
    x, y = grid_points_2d(n, length)
    k = 2 * np.pi / length * np.array([3, 2])
    mode = np.cos(k[0] * x + k[1] * y)
    state0 = jnp.asarray(np.stack([1 + 0.1 * mode, np.zeros_like(mode)]), jnp.float32)
    state = advance(gs.make_step(n, 2.0, diffusivity_u=d_u), state0, 100)
    decay = np.exp(-(d_u * (k @ k) + 0.04) * 200.0)
    np.testing.assert_allclose(state[0], 1 + 0.1 * decay * mode, atol=1e-6)
    np.testing.assert_allclose(state[1], 0.0, atol=1e-7)


def test_a_seed_square_grows_a_pattern():
    # Half of Pearson's domain at 64² (the grid spacing of 128² on L = 2.5): the patterned
    # area (v > 0.1) spreads from one seed square over t = 1000.
    state0 = gs.random_initial_state(jax.random.key(0), 64, length=1.25, n_squares=1, square_size=0.15)
    state = advance(gs.make_step(64, 1.0, length=1.25), state0, 1000)
    area0, area = (float(jnp.mean(s[1] > 0.1)) for s in (state0, state))
    assert area > 8 * area0, (area0, area)
    assert float(state.min()) > -1e-3 and float(state.max()) < 1.0 + 1e-3  # spectral overshoot only


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="diffusivity_u"):
        gs.make_step(32, 1.0, diffusivity_u=-1e-5)
    with pytest.raises(ValueError, match="dt"):
        gs.make_step(32, 5.0)
