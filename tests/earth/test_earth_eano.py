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


# ----------------------------------------------------------------------------- "official" dynamics


def _field_case(dynamics, n=4, d=3, seed=0, learned_graph=True):
    """(field, params, y, geo, sem) of a small field of `dynamics` in float64 (inside x64)."""
    rng = np.random.default_rng(seed)
    adj = np.maximum(np.eye(n), rng.uniform(size=(n, n)) < 0.5)
    geo = jnp.asarray(gltg.geo_graph(np.maximum(adj, adj.T).astype(float)))
    sem = jnp.asarray(gltg.fused_graph(np.asarray(adj, float), np.eye(n)))
    field, _ = eano.field_and_encoder(dynamics, d, learned_graph=learned_graph)
    y = {k: jnp.asarray(rng.uniform(0.1, 0.9, size=(n, d))) for k in ("h", "z", "s", "i", "r")}
    params = field.init(jax.random.key(seed), y, jnp.zeros((n, 2)), geo, sem)
    params = jax.tree.map(lambda p: p + 0.3 * rng.normal(size=p.shape), params)   # off the init
    return field, params, y, geo, sem


def test_sir_layer_is_the_released_form_and_its_arguments_sum_to_zero():
    rng = np.random.default_rng(1)
    s, i, r = (rng.normal(size=(4, 3)) for _ in range(3))
    adj, w_i, w_r = rng.uniform(size=(4, 4)), rng.normal(size=(6, 3)), rng.normal(size=(3, 3))
    a_s, a_i, a_r = (np.asarray(a) for a in eano.sir_layer(s, i, r, adj, w_i, w_r))
    infection = s @ w_i[:3] + (adj @ i) @ w_i[3:]
    np.testing.assert_allclose(a_s, -infection, rtol=1e-5)
    np.testing.assert_allclose(a_i, infection - i @ w_r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a_r, i @ w_r, rtol=1e-5)
    np.testing.assert_allclose(a_s + a_i + a_r, 0.0, atol=1e-5)


def test_official_field_drives_every_latent_through_a_full_gate():
    with jax.enable_x64(True):
        field, params, y, geo, sem = _field_case("official")
        apply = jax.jit(lambda p, x: field.apply(p, y, x, geo, sem))
        x1, x2 = jnp.array([[0.3, 1.0]] * 4), jnp.asarray(np.random.default_rng(2).normal(size=(4, 2)))
        out = apply(params, x1)
        gates = field.apply(params, y, geo, sem, method="gates")
        for k in ("z", "s", "i", "r"):
            g = np.asarray(gates[k])
            assert g.shape == (4, 3, 3)
            assert np.abs(g - np.einsum("nii->ni", g)[..., None] * np.eye(3)).max() > 1e-2
            np.testing.assert_allclose(out[k], np.einsum("nij,nj->ni", g, out["h"]), atol=1e-12)
        # dy = G(y) F(h) dX: linear in Ẋ, and nothing moves while Ẋ = 0
        mix = apply(params, 2.0 * x1 - 0.5 * x2)
        for k in out:
            np.testing.assert_allclose(mix[k], 2.0 * out[k] - 0.5 * apply(params, x2)[k], atol=1e-12)
            assert float(jnp.abs(apply(params, 0 * x1)[k]).max()) == 0.0
        # with the off-diagonal entries of L_z zeroed, G_z = diag(g) and dz = g ⊙ u
        d = 3
        keep = np.eye(d).reshape(-1).astype(bool)
        p2 = jax.tree.map(lambda a: a, params)
        gz = p2["params"]["gate_z"]
        gz["kernel"] = jnp.where(keep[None, :], gz["kernel"], 0.0)
        gz["bias"] = jnp.where(keep, gz["bias"], 0.0)
        g = np.einsum("nii->ni", np.asarray(field.apply(p2, y, geo, sem, method="gates")["z"]))
        out2 = apply(p2, x1)
        np.testing.assert_allclose(out2["z"], g * np.asarray(out2["h"]), atol=1e-12)
    # the "sirs" form moves s, i, r on its own mechanism
    field, params, y, geo, sem = _field_case("sirs")
    still = field.apply(params, y, jnp.zeros((4, 2)), geo, sem)
    assert float(jnp.abs(still["i"]).max()) > 1e-3 and float(jnp.abs(still["z"]).max()) == 0.0


@pytest.mark.parametrize("dynamics", ["official", "sirs"])
def test_controlled_solution_depends_only_on_the_trace_of_the_path(dynamics):
    """A controlled ODE dy = G(y) dX gives the same y(T) along X(t) and along X(φ(t)) for any
    increasing φ with φ(0) = 0, φ(T) = T; a term of its own in t (SIRS) breaks that. (Fixed
    graph: the learned graph's row normalisation jumps where a row's mass reaches 0, which
    fixed-step solves of the two paths resolve differently.)"""
    t_end = 2.0
    with jax.enable_x64(True):
        field, params, y0, geo, sem = _field_case(dynamics, learned_graph=False)
        phase = jnp.linspace(0.0, 1.5, 4)

        def xdot(t):      # X(t) = (sin(2t + phase_v), t / T) per region
            return jnp.stack([2 * jnp.cos(2 * t + phase), jnp.full(4, 1 / t_end)], -1)

        def vf(t, y, warp):
            tt = jnp.where(warp, t ** 2 / t_end, t)
            speed = jnp.where(warp, 2 * t / t_end, 1.0)
            return field.apply(params, y, speed * xdot(tt), geo, sem)

        solve = jax.jit(lambda warp: eano.integrate(vf, y0, 0.0, t_end, warp, solver="rk4",
                                                    dt=t_end / 200))
        plain, warped = solve(False), solve(True)
        gap = max(float(jnp.abs(plain[k] - warped[k]).max()) for k in plain)
        moved = max(float(jnp.abs(plain[k] - y0[k]).max()) for k in plain)
    assert moved > 1e-2
    if dynamics == "official":   # the solver's error only (the relu kinks slow its convergence)
        assert gap < 2e-4
    else:
        assert gap > 5e-3
