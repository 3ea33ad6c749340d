"""Return distributions: the exact forward DP against Monte-Carlo rollouts and the values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import data, returns
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction, make_mdp

N = 20
NUM = 40_000
DKW = np.sqrt(np.log(2 / 1e-4) / (2 * NUM))          # P(sup |F̂ − F| > DKW) ≤ 1e-4


def _env(seed=0):
    p, r = data.random_arrays(np.random.default_rng(seed), 6, 3, 4)
    return make_mdp(p, r, s0=1, n=N)


def test_dp_distribution_matches_monte_carlo_deterministic_policy():
    env = _env()
    policy, _ = backward_induction(env, ut.family("convex_concave", 4, N), N)
    exact = np.asarray(returns.distribution_exact(env, policy, N))
    mc = np.asarray(returns.distribution_mc(env, policy, jax.random.PRNGKey(0), N, NUM))
    assert exact.sum() == pytest.approx(1.0, abs=1e-5) and mc.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.max(np.abs(np.cumsum(exact) - np.cumsum(mc))) < DKW
    assert exact @ np.arange(exact.size) == pytest.approx(mc @ np.arange(mc.size), rel=0.01)


def test_dp_distribution_matches_monte_carlo_stochastic_policy():
    env = _env(1)
    probs = jnp.asarray(np.random.default_rng(3).dirichlet(np.ones(3), (4, 6, 4 * N + 1)),
                        jnp.float32)
    exact = np.asarray(returns.distribution_exact(env, probs, N))
    mc = np.asarray(returns.distribution_mc(env, probs, jax.random.PRNGKey(1), N, NUM))
    assert np.max(np.abs(np.cumsum(exact) - np.cumsum(mc))) < DKW


def test_expected_utility_of_the_optimal_policy_is_its_value():
    env = _env(2)
    for name in ("sqrt", "square", "linear"):
        u = ut.family(name, 4, N)
        policy, values = backward_induction(env, u, N)
        eta = returns.distribution_exact(env, policy, N)
        assert float(u @ eta) == pytest.approx(float(values[0, 1, 0]), rel=1e-5)


def test_occupancies_are_distributions_supported_on_reachable_returns():
    env = _env(3)
    policy, _ = backward_induction(env, ut.family("sqrt", 4, N), N)
    occ = np.asarray(returns.occupancy(env, policy, N))
    np.testing.assert_allclose(occ.sum(axis=(1, 2)), 1.0, atol=1e-5)
    for h in range(5):
        assert np.all(occ[h][:, h * N + 1:] == 0)


def test_unknown_method_is_named():
    env = _env()
    with pytest.raises(ValueError, match="must be 'exact' or 'mc'; got 'dp'"):
        returns.distribution(env, jnp.zeros((4, 6, 4 * N + 1), jnp.int32), None, N, "dp", 10)
