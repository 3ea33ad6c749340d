"""MultiPDENet forward pass: the frozen-FD, correction-free model is the classical FD + RK4
(or Euler) solver on the coarse grid; rollouts and gradients; configuration errors."""
import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import model as mp
from lib.pde import burgers

N, H_GRID, NU, MACRO_DT = 16, 1.0 / 16, 0.005, 4e-3
SMALL_FNO = {"arch": "fno", "modes": 4, "width": 8, "depth": 1, "projection_width": 8}


def _state() -> jax.Array:
    g = np.arange(N) * H_GRID * 2 * np.pi
    x, y = np.meshgrid(g, g, indexing="xy")
    return jnp.asarray(np.stack([np.sin(x) * np.cos(y) + 0.3, np.cos(x + 2 * y)], -1), jnp.float32)


def _d1(f, axis):
    r = lambda s: jnp.roll(f, -s, axis=axis)  # f[i + s]
    return (8 * (r(1) - r(-1)) - (r(2) - r(-2))) / (12 * H_GRID)


def _d2(f, axis):
    r = lambda s: jnp.roll(f, -s, axis=axis)
    return (16 * (r(1) + r(-1)) - (r(2) + r(-2)) - 30 * f) / (12 * H_GRID**2)


def _fd_burgers(u):
    """Hand-written 4th-order FD Burgers right-hand side on `(H, W, 2)` (axis 0 = y, 1 = x)."""
    return NU * (_d2(u, 0) + _d2(u, 1)) - (u[..., :1] * _d1(u, 1) + u[..., 1:] * _d1(u, 0))


def _classical(u, n_steps, dt, method):
    for _ in range(n_steps):
        if method == "euler":
            u = u + dt * _fd_burgers(u)
        else:
            k1 = _fd_burgers(u)
            k2 = _fd_burgers(u + dt / 2 * k1)
            k3 = _fd_burgers(u + dt / 2 * k2)
            k4 = _fd_burgers(u + dt * k3)
            u = u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return u


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_frozen_model_without_networks_is_classical_solver(method):
    model = mp.make_model(
        "burgers", H_GRID, MACRO_DT, integrator=method, coefficients={"viscosity": NU},
        filter_mode="frozen", corrector=None, micro_net=None, macro_net=None,
    )
    u0 = _state()
    params = jax.jit(model.init)(jax.random.key(0), u0)
    got = jax.jit(lambda p, u: mp.macro_step(model, p, u))(params, u0)
    want = _classical(u0, 4, MACRO_DT / 4, method)
    assert float(jnp.abs(want - u0).max()) > 1e-3  # the step moves the state well beyond the tolerance
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_zero_initialised_networks_and_symmetric_filters_start_as_classical_solver():
    model = mp.make_model(
        "burgers", H_GRID, MACRO_DT, coefficients={"viscosity": NU},
        corrector=SMALL_FNO, micro_net=SMALL_FNO, macro_net={"arch": "unet", "features": (4, 8)},
    )
    u0 = _state()
    params = jax.jit(model.init)(jax.random.key(0), u0)
    traj = jax.jit(lambda p, u: mp.rollout(model, p, u, 2))(params, u0)
    chex.assert_shape(traj, (2, N, N, 2))
    want = _classical(_classical(u0, 4, MACRO_DT / 4, "rk4"), 4, MACRO_DT / 4, "rk4")
    np.testing.assert_allclose(traj[-1], want, atol=3e-6)


def test_frozen_model_matches_lib_pde_burgers_step():
    """The same step as the workspace's classical Burgers solver (channels-first `(2, n, n)`)."""
    model = mp.make_model(
        "burgers", burgers.LENGTH / N, MACRO_DT, coefficients={"viscosity": NU},
        filter_mode="frozen", corrector=None, micro_net=None, macro_net=None,
    )
    u0 = _state()
    step = burgers.make_step(N, dt=MACRO_DT / 4, viscosity=NU)
    want = jnp.moveaxis(u0, -1, 0)
    for _ in range(4):
        want = step(want)
    step = jax.jit(lambda u: mp.macro_step(model, model.init(jax.random.key(0), u), u))
    np.testing.assert_allclose(jnp.moveaxis(step(u0), -1, 0), want, atol=2e-6)


def test_kdv_frozen_model_is_classical_rk4():
    n, length, dt = 32, 2 * np.pi, 1e-3
    h = length / n
    x = np.arange(n) * h
    u0 = jnp.asarray((0.5 * np.sin(x) + 0.2)[:, None], jnp.float32)
    model = mp.make_model("kdv", h, 2 * dt, n_micro=2, filter_mode="frozen",
                          corrector=None, micro_net=None, macro_net=None)

    def rhs(u):
        r = lambda s: jnp.roll(u, -s, axis=0)
        ux = (8 * (r(1) - r(-1)) - (r(2) - r(-2))) / (12 * h)
        uxxx = (-(r(3) - r(-3)) + 8 * (r(2) - r(-2)) - 13 * (r(1) - r(-1))) / (8 * h**3)
        return -6 * u * ux - uxxx

    want = u0
    for _ in range(2):
        k1 = rhs(want)
        k2 = rhs(want + dt / 2 * k1)
        k3 = rhs(want + dt / 2 * k2)
        k4 = rhs(want + dt * k3)
        want = want + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    got = jax.jit(lambda u: mp.macro_step(model, model.init(jax.random.key(0), u), u))(u0)
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_rollout_gradients_reach_every_part():
    model = mp.make_model(
        "navier_stokes", 2 * np.pi / N, 0.02, n_micro=2, corrector=SMALL_FNO,
        micro_net=dict(SMALL_FNO, zero_init_output=False), macro_net=SMALL_FNO,
    )
    u0 = jnp.stack([_state()] * 2)  # a batch of 2 trajectories
    params = jax.jit(model.init)(jax.random.key(0), u0)

    @jax.jit
    def loss(p):
        return jnp.mean(mp.rollout(model, p, u0, 2) ** 2)

    grads = jax.grad(loss)(params)["params"]
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in jax.tree_util.tree_leaves(grads))
    for part in ["filters", "corrector", "micro_net", "macro_net"]:
        norm = sum(float(jnp.abs(g).sum()) for g in jax.tree_util.tree_leaves(grads[part]))
        assert norm > 0.0, part


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"system": "heat"}, "system = 'heat'"),
        ({"n_micro": 0}, "n_micro = 0"),
        ({"integrator": "rk45"}, "integrator = 'rk45'"),
        ({"coefficients": {"reynolds": 1000.0}}, "do not fit navier_stokes_rhs"),
        ({"macro_dt": 0.0}, "macro_dt = 0.0"),
        ({"micro_net": {"arch": "mlp"}}, "micro_net.arch = 'mlp'"),
        ({"system": "kdv", "macro_net": {"arch": "unet"}}, "needs a 2-D system"),
    ],
)
def test_bad_configuration_raises(kwargs, match):
    args = {"system": "navier_stokes", "h": 0.1, "macro_dt": 0.1, **kwargs}
    with pytest.raises(ValueError, match=match):
        mp.make_model(**args)
