"""GM-SDE/ODE with the exact denoiser of GM data recover it in few steps; Euler needs many."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.gmflow import denoising, metrics, mixture, samplers
from tests.gmflow.gmflow_analytic import data_gm, data_samples

N = 3000


@pytest.fixture(scope="module")
def setup():
    data = data_gm()
    den = lambda x, t: denoising.data_posterior(data, x, t)
    vel = lambda x, t: (x - mixture.mean(den(x, t))) / t
    x1 = jax.random.normal(jax.random.key(0), (N, 1, 2))
    ref = data_samples(N, 1)
    floor = metrics.sliced_wasserstein(data_samples(N, 2), ref, 64)
    gm_run = jax.jit(lambda x1, key, nfe, sub, solver: samplers.gm_sample(
        den, x1, key, nfe=nfe, solver=solver, substeps=sub), static_argnums=(4,))
    # Euler (diffrax) on the exact mean velocity, NFE static (the number of steps)
    euler_run = jax.jit(lambda x1, key, nfe: samplers.fm_sample(vel, x1, key, nfe=nfe,
                                                                  solver="euler"),
                         static_argnums=(2,))
    return {"den": den, "vel": vel, "x1": x1, "ref": ref, "floor": floor, "gm_run": gm_run,
            "euler_run": euler_run}


def _swd(x, ref):
    return metrics.sliced_wasserstein(np.asarray(x)[:, 0], ref, 64)


def test_gm_solvers_recover_gm_data_in_two_steps_where_euler_needs_many(setup):
    s = setup
    key = jax.random.key(3)
    gm_ode = _swd(s["gm_run"](s["x1"], key, 2, 64, "gm_ode"), s["ref"])
    gm_sde = _swd(s["gm_run"](s["x1"], key, 2, 1, "gm_sde"), s["ref"])
    euler = {n: _swd(s["euler_run"](s["x1"], key, n), s["ref"]) for n in (2, 64)}
    # within ~2× the sampling noise of two independent data sets at NFE 2 ...
    assert gm_ode < 2 * s["floor"] + 0.02 and gm_sde < 2 * s["floor"] + 0.02, (gm_ode, gm_sde, s)
    # ... where Euler with the same exact mean velocity is far off, and needs many steps
    assert euler[2] > 5 * gm_ode, euler
    assert euler[64] < euler[2] / 4, euler


def test_gm_sde_first_step_from_t1_samples_the_data_exactly(setup):
    """At NFE = 1 the GM-SDE draws x₀ from q(x₀ | x_1) = p(x₀): the data GM itself."""
    s = setup
    x = np.asarray(s["gm_run"](s["x1"], jax.random.key(4), 1, 1, "gm_sde"))[:, 0]
    centres = np.asarray(data_gm().means[:, 0])
    weights = np.exp(np.asarray(data_gm().logweights[:, 0]))
    np.testing.assert_allclose(x.mean(0), weights @ centres, atol=0.05)


def test_second_order_term_vanishes_for_the_exact_denoiser(setup):
    """Eq. 10 carries the previous exact GM to the current one exactly, so Δμ = 0."""
    s = setup
    key = jax.random.key(5)
    a = s["gm_run"](s["x1"][:200], key, 4, 8, "gm_ode")
    b = s["gm_run"](s["x1"][:200], key, 4, 8, "gm_ode2")
    np.testing.assert_allclose(a, b, atol=2e-4)


def test_gm_ode_on_a_point_mass_is_euler(setup):
    """GM-ODE sub-steps on the point-mass x₀ GM reproduce diffrax Euler on the velocity."""
    s = setup
    x1 = s["x1"][:100]
    den = samplers.velocity_denoiser(s["vel"])
    a = jax.jit(lambda x1: samplers.gm_sample(den, x1, jax.random.key(0), nfe=4,
                                               solver="gm_ode", substeps=5))(x1)
    b = s["euler_run"](x1, jax.random.key(0), 4)
    np.testing.assert_allclose(a, b, atol=1e-4)


def test_jitted_solvers_keep_shape_dtype_and_compile_once(setup):
    s = setup
    traces = []

    def den(x, t):
        traces.append(1)
        return s["den"](x, t)

    run = jax.jit(lambda x1, key, nfe, sub: samplers.gm_sample(den, x1, key, nfe=nfe,
                                                               solver="gm_sde2", substeps=sub))
    x1 = s["x1"][:16]
    for nfe in (1, 3, 5):
        out = run(x1, jax.random.key(0), nfe, 2)
        assert out.shape == x1.shape and out.dtype == x1.dtype
        assert np.all(np.isfinite(np.asarray(out)))
    n_traces = len(traces)
    run(x1, jax.random.key(1), 7, 3)
    assert len(traces) == n_traces      # a new NFE does not retrace
    step = jax.jit(lambda x: samplers.ode_substeps(s["den"](x, 0.5), x, 0.5, 0.25, 4))
    assert step(x1).shape == x1.shape and step(x1).dtype == jnp.float32


def test_bad_sampler_arguments_raise():
    den = lambda x, t: mixture.dirac(x)
    x = jnp.zeros((2, 1, 2))
    with pytest.raises(ValueError, match="NFE"):
        samplers.gm_sample(den, x, jax.random.key(0), nfe=0, solver="gm_sde")
    with pytest.raises(ValueError, match="unknown GM solver"):
        samplers.gm_sample(den, x, jax.random.key(0), nfe=1, solver="gm_foo")
    with pytest.raises(ValueError, match="sub-steps"):
        samplers.gm_sample(den, x, jax.random.key(0), nfe=1, solver="gm_ode", substeps=0)
    with pytest.raises(ValueError, match="Heun needs NFE >= 2"):
        samplers.fm_sample(lambda x, t: x, x, jax.random.key(0), nfe=1, solver="heun")
