"""EANO: the diffrax epidemic block reproduces the simulator; gradients match finite differences."""
import diffrax
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.earth import eano, gltg, simulator


def _sir_field(t, y, args):
    """EANO's epidemic block (d = 1) with the simulator's seasonal β(t) and fixed γ, ω."""
    adj, beta0, amp, phase, gamma, omega = args
    beta = beta0 * (1 + amp * jnp.cos(2 * jnp.pi * (t - phase) / 52.0))
    return eano.epidemic_rhs(y[0], y[1], y[2], beta, gamma, omega, adj)


@functools.partial(jax.jit, static_argnums=2)   # the true and the wrong γ share one compile
def _solve_sir(y0, args, weeks):
    return eano.integrate(_sir_field, y0, 0.0, float(weeks), args, solver="rk4", dt=1 / 16,
                          saveat=diffrax.SaveAt(ts=jnp.arange(weeks + 1.0)))


def _eano_sir(c, mix, y0, weeks, gamma_factor=1.0):
    """Solve with diffrax RK4 at dt = 1/16; returns (s, i, r) [weeks + 1, N]."""
    y0 = tuple(jnp.asarray(a, jnp.float64)[:, None] for a in y0)
    args = (jnp.asarray(mix), c.beta0, c.seasonal_amp, c.phase, c.gamma * gamma_factor, c.omega)
    ys = _solve_sir(y0, args, weeks)
    return [np.asarray(a[..., 0]) for a in ys]


def test_eano_with_true_rates_reproduces_simulator():
    cfg = simulator.SimConfig(num_regions=5, num_weeks=30, seed=3)
    with jax.enable_x64(True):
        sim = simulator.simulate(cfg)
        y0 = (sim["s"][0], sim["i"][0], sim["r"][0])
        s, i, r = _eano_sir(cfg, sim["mixing"], y0, cfg.num_weeks)
        wrong = _eano_sir(cfg, sim["mixing"], y0, cfg.num_weeks, gamma_factor=1.05)[1]
    scale = sim["i"].max()
    assert scale > 1e-3  # an epidemic actually happened
    # two independent RK4 integrations (numpy at dt = 1/14, diffrax at dt = 1/16)
    np.testing.assert_allclose(i, sim["i"], atol=2e-5 * scale)
    np.testing.assert_allclose(s, sim["s"], atol=1e-5)
    np.testing.assert_allclose(r, sim["r"], atol=1e-5)
    assert np.abs(wrong - sim["i"]).max() > 1e-3 * scale  # a 5 % wrong recovery rate is visible


def test_epidemic_rhs_conserves_population_and_is_zero_without_infection():
    rng = np.random.default_rng(0)
    s, i, r = (rng.uniform(size=(4, 3)) for _ in range(3))
    adj = gltg.geo_graph(np.ones((4, 4)))
    ds, di, dr = eano.epidemic_rhs(s, i, r, 2.0, 1.0, 0.1, adj)
    np.testing.assert_allclose(np.asarray(ds + di + dr), 0.0, atol=1e-6)
    ds, di, dr = eano.epidemic_rhs(s, 0 * i, 0 * r, 2.0, 1.0, 0.1, adj)
    assert float(jnp.abs(ds).max()) == 0.0 and float(jnp.abs(di).max()) == 0.0


@pytest.mark.parametrize("adjoint", ["recursive_checkpoint", "backsolve"])
def test_gradient_through_diffrax_matches_finite_differences(adjoint):
    mix = gltg.geo_graph(np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1.0]]))
    y0 = (jnp.array([[0.9], [0.95], [0.99]]), jnp.array([[0.05], [0.01], [0.0]]), jnp.array([[0.05], [0.04], [0.01]]))

    def field(t, y, args):
        return eano.epidemic_rhs(*y, args[0], args[1], 0.02, mix)

    def final_infected(rates):
        ys = eano.integrate(field, y0, 0.0, 6.0, (rates[0], rates[1]), solver="rk4",
                            adjoint=adjoint, dt=0.25)
        return jnp.sum(ys[1] ** 2) + jnp.sum(ys[2])

    with jax.enable_x64(True):
        rates = jnp.array([2.0, 1.3])
        value_and_grad = jax.jit(jax.value_and_grad(final_infected))  # one compilation
        grad = np.asarray(value_and_grad(rates)[1])
        eps = 1e-6
        fd = [(value_and_grad(rates + eps * e)[0] - value_and_grad(rates - eps * e)[0]) / (2 * eps)
              for e in np.eye(2)]
    tol = 1e-7 if adjoint == "recursive_checkpoint" else 1e-3  # backsolve re-solves backwards
    np.testing.assert_allclose(grad, np.asarray(fd), rtol=tol, atol=1e-9)
    assert np.all(np.abs(grad) > 1e-4)
