"""TRACTOR-UL: it lowers the non-compatibility, stays feasible, and the multi-environment
gradient is the sum over environments (gamble MDP: the √ expert takes the sure thing)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import data, projection, returns, tractor
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction, make_mdp

N, H = 10, 2
C = projection.slope_bound(H, N, 10.0)


@pytest.fixture(scope="module")
def setting():
    env = make_mdp(*data.gamble_arrays(0.6, 0.5), s0=0, n=N)
    policy, _ = backward_induction(env, ut.family("sqrt", H, N), N)
    return env, returns.distribution_exact(env, policy, N)


def _run(envs, eta, alpha, *, adam=False, iters=20, init="square"):
    return tractor.run(envs, eta, ut.family(init, H, N), jnp.float32(alpha), jax.random.PRNGKey(0),
                       n=N, num_iters=iters, eval_every=5, method="exact", num=1, slope=C,
                       horizon=float(H), adam=adam, proj_iters=500)


def test_tractor_lowers_noncompatibility_to_a_third(setting):
    env, eta = setting
    tr = _run(data.stack_mdps([env]), eta[None], 1.0)
    c = np.asarray(tr.c_max)
    assert c.shape == (5,) and list(np.asarray(tr.steps)) == [0, 5, 10, 15, 20]
    assert c[0] == pytest.approx(0.175, abs=1e-5) and c[-1] <= c[0] / 3
    for u in (tr.utility, tr.last, *tr.averaged):
        assert float(projection.violation(u, C, float(H))) < 1e-5
    assert float(tr.projection_gap) < 1e-4


def test_output_is_the_average_of_the_iterates(setting):
    env, eta = setting
    u0 = np.asarray(ut.family("square", H, N))
    tr = tractor.run(data.stack_mdps([env]), eta[None], ut.family("square", H, N),
                     jnp.float32(1.0), jax.random.PRNGKey(0), n=N, num_iters=2, eval_every=1,
                     method="exact", num=1, slope=C, horizon=float(H), proj_iters=500)
    avg = np.asarray(tr.averaged)                      # Ū_0, Ū_1 = (U_0 + U_1)/2, Ū_2
    np.testing.assert_allclose(avg[0], u0, atol=1e-6)
    u1 = 2 * avg[1] - u0
    assert np.max(np.abs(u1 - u0)) > 0.01                          # the step moved U
    assert float(projection.violation(jnp.asarray(u1), C, float(H))) < 1e-5
    np.testing.assert_allclose(avg[2], (u0 + u1 + np.asarray(tr.last)) / 3, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tr.utility), avg[2], atol=1e-7)


def test_adam_variant_lowers_it_too(setting):
    env, eta = setting
    c = np.asarray(_run(data.stack_mdps([env]), eta[None], 0.1, adam=True).c_max)
    assert c[-1] < c[0] / 2


def test_tiny_steps_leave_the_utility_in_place(setting):
    env, eta = setting
    tr = _run(data.stack_mdps([env]), eta[None], 1e-6)
    np.testing.assert_allclose(np.asarray(tr.utility), np.asarray(ut.family("square", H, N)),
                               atol=1e-4)


def test_two_copies_of_an_environment_double_the_gradient(setting):
    env, eta = setting
    one = _run(data.stack_mdps([env]), eta[None], 0.4)
    two = _run(data.stack_mdps([env, env]), jnp.stack([eta, eta]), 0.2)
    np.testing.assert_allclose(np.asarray(two.utility), np.asarray(one.utility), atol=1e-4)
    np.testing.assert_allclose(np.asarray(two.c_max), np.asarray(one.c_max), atol=1e-4)


def test_iterations_must_be_a_multiple_of_the_scoring_period(setting):
    env, eta = setting
    with pytest.raises(ValueError, match="must be a multiple of eval_every"):
        _run(data.stack_mdps([env]), eta[None], 1.0, iters=7)
