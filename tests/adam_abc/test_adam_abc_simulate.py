"""The sharded many-run simulator: a closed form (SGD's stationary gradient level on a noisy
quadratic), agreement with a plain Python loop, and invariance to the device count."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.adam_abc import oracles, problems, simulate
from lib.adam_abc.adam import adam
from lib.adam_abc.sgd import sgd
from lib.common import mesh as mesh_lib


def test_sgd_stationary_gradient_level_matches_the_closed_form():
    """SGD θ ← θ − α(H(θ − θ*) + σζ) on a diagonal quadratic: in stationarity each
    coordinate has variance ασ²/(h(2 − αh)), so E‖∇f‖² = Σ_i ασ² h_i/(2 − α h_i)."""
    problem = problems.quadratic(4, 10.0)
    sigma, alpha = 0.5, 0.3
    oracle = oracles.additive(problem, "gaussian", sigma)
    mesh = mesh_lib.make_mesh()
    runner = simulate.make_runner(problem, oracle, lambda h: sgd(h["alpha"]), mesh)
    runs = 2048
    keys = simulate.run_keys(0, runs, "stationary", mesh=mesh)
    rec = runner(simulate.hparams(alpha=alpha), keys, np.array([1000, 1600]))
    last = simulate.to_host(rec["last"])[:, -1].astype(np.float64)
    h = np.logspace(0, -1, 4)
    exact = float(np.sum(alpha * sigma ** 2 * h / (2 - alpha * h)))
    assert abs(last.mean() - exact) <= 5 * last.std() / math.sqrt(runs), (last.mean(), exact)
    # the per-segment sum is the sum of 600 such values: its mean over runs is 600x the level
    seg = simulate.to_host(rec["sum"])[:, -1].astype(np.float64) / 600
    assert abs(seg.mean() - exact) <= 0.05 * exact


def test_records_match_a_python_loop_with_the_same_keys():
    problem = problems.least_squares(16, 3)
    oracle = oracles.minibatch(problem, 2)
    opt = adam(0.05, 0.9, 0.99, 1e-8)
    key = jax.random.key(5)
    times = np.array([0, 3, 10, 17])
    rec = jax.jit(lambda k: simulate.trajectory(problem, oracle, opt, k, times))(key)

    @jax.jit
    def step(theta, state, t):
        g = oracle.sample(theta, jax.random.fold_in(key, t))
        updates, state = opt.update(g, state, theta)
        theta = optax.apply_updates(theta, updates)
        return theta, state, jnp.sum(problem.grad(theta) ** 2)

    theta, state, sq = problem.theta0, opt.init(problem.theta0), []
    for t in range(17):
        theta, state, value = step(theta, state, t)
        sq.append(float(value))
    sq = np.array(sq)
    np.testing.assert_allclose(rec["last"], [float(jnp.sum(problem.grad(problem.theta0) ** 2)),
                                             sq[2], sq[9], sq[16]], rtol=2e-5)
    np.testing.assert_allclose(rec["sum"], [0.0, sq[:3].sum(), sq[3:10].sum(), sq[10:].sum()],
                               rtol=2e-5)
    np.testing.assert_allclose(rec["max"][1:], [sq[:3].max(), sq[3:10].max(), sq[10:].max()],
                               rtol=2e-5)
    assert rec["max"][0] == -np.inf


def test_runs_do_not_depend_on_the_number_of_devices():
    problem = problems.quadratic(3)
    oracle = oracles.additive(problem, "gaussian", 1.0)
    make = lambda h: adam(h["alpha"], 0.9, h["beta2"], 1e-8)   # noqa: E731
    out = []
    for devices in (jax.devices()[:1], jax.devices()):
        mesh = mesh_lib.make_mesh(devices=devices)
        runner = simulate.make_runner(problem, oracle, make, mesh)
        keys = simulate.run_keys(3, 16, "devices", mesh=mesh)
        rec = runner(simulate.hparams(alpha=0.1, beta2=0.99), keys, np.array([5, 40]))
        assert rec["last"].sharding.spec[0] == "data"
        out.append(simulate.to_host(rec["sum"]))
    assert len(jax.devices()) == 8
    np.testing.assert_allclose(out[0], out[1], rtol=1e-6)  # XLA vectorises shards differently
