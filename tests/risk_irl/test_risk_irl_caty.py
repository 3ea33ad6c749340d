"""CATY-UL: (non)compatibility, its threshold and its input checks.

The gamble MDP (lib.risk_irl.data.gamble_arrays, H = 2): a sure 0.5 or 1 w.p. 0.6. The
√-utility expert takes the sure thing, the linear and square ones gamble, so C has closed
forms (U normalised to U(2) = 2)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import caty, data, returns
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction, make_mdp

N = 10


@pytest.fixture(scope="module")
def gamble():
    env = make_mdp(*data.gamble_arrays(0.6, 0.5), s0=0, n=N)
    etas = {}
    for f in ("sqrt", "linear", "square"):
        policy, _ = backward_induction(env, ut.family(f, 2, N), N)
        etas[f] = returns.distribution_exact(env, policy, N)
    return env, etas


def _c(env, utility, eta):
    return float(caty.noncompatibility(env, utility, eta, jax.random.PRNGKey(0), N, "exact")[0])


def test_noncompatibility_in_closed_form(gamble):
    env, etas = gamble
    # U = G: gamble 0.6 vs sure 0.5; U = G²/2: 0.6·1/2 vs 0.25/2
    assert _c(env, ut.family("linear", 2, N), etas["sqrt"]) == pytest.approx(0.1, abs=1e-6)
    assert _c(env, ut.family("square", 2, N), etas["sqrt"]) == pytest.approx(0.3 - 0.125, abs=1e-6)
    # U = √(2G): sure √1 = 1 vs gamble 0.6·√2
    assert _c(env, ut.family("sqrt", 2, N), etas["linear"]) == pytest.approx(1 - 0.6 * np.sqrt(2),
                                                                           abs=1e-6)
    for expert, eta in etas.items():
        for f in ut.FAMILIES:
            c = _c(env, ut.family(f, 2, N), eta)
            assert c >= -1e-6                                  # nothing beats the optimum
            if f == expert:
                assert abs(c) < 1e-6


def test_caty_answers_with_the_threshold(gamble):
    env, etas = gamble
    res = caty.caty(env, ut.family("sqrt", 2, N), etas["sqrt"], jax.random.PRNGKey(1), n=N,
                    num_expert=10_000, method="mc", num=10_000, delta=0.05)
    tau = 2 * 2 * np.sqrt(np.log(4 / 0.05) / (2 * 10_000))        # rewards lie on the grid
    assert float(res.threshold) == pytest.approx(tau, rel=1e-5)
    assert bool(res.compatible)
    assert float(res.relative) == pytest.approx(float(res.absolute) / float(res.optimal_value),
                                                rel=1e-5)
    bad = caty.caty(env, ut.family("linear", 2, N), etas["sqrt"], jax.random.PRNGKey(1), n=N,
                    num_expert=10_000, method="exact", delta=0.05)
    assert not bool(bad.compatible) and float(bad.absolute) == pytest.approx(0.1, abs=1e-6)


def test_threshold_shrinks_with_samples_and_grows_with_grid_rounding():
    u = ut.family("linear", 5, 100)
    t1 = caty.threshold(u, n=100, horizon=5, num_expert=100, num_opt=None, delta=0.1)
    t2 = caty.threshold(u, n=100, horizon=5, num_expert=400, num_opt=None, delta=0.1)
    assert t2 == pytest.approx(t1 / 2)
    t3 = caty.threshold(u, n=100, horizon=5, num_expert=400, num_opt=None, delta=0.1,
                        reward_residual=0.004)
    assert t3 == pytest.approx(t2 + 2 * 1.0 * 5 * 0.004, rel=1e-4)
    with pytest.raises(ValueError, match="delta must be in"):
        caty.threshold(u, n=100, horizon=5, num_expert=1, num_opt=None, delta=1.5)


def test_several_environments_are_scored_each(gamble):
    env, etas = gamble
    two = data.stack_mdps([env, env])
    res = caty.caty(two, ut.family("linear", 2, N), jnp.stack([etas["sqrt"], etas["linear"]]),
                    jax.random.PRNGKey(0), n=N, num_expert=10_000, method="exact")
    assert res.absolute.shape == (2,)
    np.testing.assert_allclose(np.asarray(res.absolute), [0.1, 0.0], atol=1e-6)


@pytest.mark.parametrize("utility,message", [
    (np.r_[np.linspace(0, 2, 12), np.linspace(1, 2, 9)], r"not non-decreasing: U\[11\]"),
    (np.full(21, np.nan), "non-finite value"),
    (np.linspace(0, 2, 20), r"must have shape \(21,\)"),
])
def test_bad_utilities_get_clear_errors(gamble, utility, message):
    env, etas = gamble
    with pytest.raises(ValueError, match=message):
        caty.caty(env, utility, etas["sqrt"], jax.random.PRNGKey(0), n=N, num_expert=10)
