"""The RS-MDP: input checks, backward induction against risk-neutral value iteration and
closed-form risk attitudes."""
import jax.numpy as jnp
import numpy as np
import pytest

from lib.risk_irl import data
from lib.risk_irl import utilities as ut
from lib.risk_irl.mdp import backward_induction, make_mdp, risk_neutral_values

N = 20


def _random(seed=0, s=5, a=3, h=4):
    p, r = data.random_arrays(np.random.default_rng(seed), s, a, h)
    return make_mdp(p, r, s0=1, n=N)


@pytest.mark.parametrize("env", [_random(0), _random(1, s=3, a=4, h=3), data.investment_mdp(100)],
                         ids=["random", "random_small", "investment"])
def test_linear_utility_is_risk_neutral_value_iteration(env):
    n = N if env.p.shape[1] != 4 else 100
    horizon = env.p.shape[0]
    _, values = backward_induction(env, ut.family("linear", horizon, n), n)
    v_rn = np.asarray(risk_neutral_values(env, env.k / n))             # grid rewards k/n
    for h in range(horizon + 1):
        y = np.arange(h * n + 1)
        np.testing.assert_allclose(np.asarray(values[h])[:, : h * n + 1],
                                   y[None, :] / n + v_rn[h][:, None], atol=2e-5)


def test_risk_attitudes_choose_as_in_closed_form():
    """Step 0: `sure` leads to a state paying 0.5, `gamble` to one paying 1 w.p. 0.6, else 0.
    E[G] favours the gamble (0.6 > 0.5); √ utility the sure thing (√0.5 > 0.6); G² the gamble."""
    env = make_mdp(*data.gamble_arrays(0.6, 0.5), s0=0, n=10)
    choice = {f: int(backward_induction(env, ut.family(f, 2, 10), 10)[0][0, 0, 0])
              for f in ("linear", "sqrt", "square")}
    assert choice == {"linear": 1, "sqrt": 0, "square": 1}
    _, values = backward_induction(env, ut.family("sqrt", 2, 10), 10)
    np.testing.assert_allclose(float(values[0, 0, 0]), np.sqrt(2 * 0.5), rtol=1e-6)


def test_investment_mdp_rewards_and_moves():
    env = data.investment_mdp(100)
    np.testing.assert_array_equal(np.asarray(env.k[0]), [[0, 0, 0], [3, 0, 6], [10, 0, 20],
                                                         [50, 0, 100]])
    p = np.asarray(env.p[0])
    assert p[1, 1, 2] == pytest.approx(1 / 3) and p[1, 2, 0] == pytest.approx(1 / 5)
    assert p[3, 1, 3] == pytest.approx(1.0) and p[0, 2, 0] == pytest.approx(1.0)


def test_policy_is_padded_beyond_reachable_returns():
    env = _random(2)
    policy, values = backward_induction(env, ut.family("sqrt", 4, N), N)
    assert policy.shape == (4, 5, 4 * N + 1) and values.shape == (5, 5, 4 * N + 1)
    assert np.all(np.asarray(values[1])[:, N + 1:] == 0)


@pytest.mark.parametrize("edit,message", [
    (lambda p, r: (p * 1.1, r), r"transition row p\[h=0, s=0, a=0, :\] sums to 1.1"),
    (lambda p, r: (p, r + 0.6), r"reward r\[h=.*\] = .* is outside \[0, 1\]"),
    (lambda p, r: (p, -r - 0.1), r"is outside \[0, 1\]"),
    (lambda p, r: (np.where(p > 0, -p, p), r), r"is not a probability"),
    (lambda p, r: (p[..., :-1], r), r"must have shape \(H, S, A, S\)"),
    (lambda p, r: (p, r[:, :, :-1]), r"must have shape \(H, S, A\)"),
])
def test_bad_mdps_get_clear_errors(edit, message):
    p, r = data.random_arrays(np.random.default_rng(0), 3, 2, 2)
    p, r = edit(p.astype(np.float64), r)
    with pytest.raises(ValueError, match=message):
        make_mdp(p, r, s0=0, n=10)


def test_bad_initial_state_and_utility_length():
    p, r = data.random_arrays(np.random.default_rng(0), 3, 2, 2)
    with pytest.raises(ValueError, match=r"initial state s0 = 3 is not in \[0, 3\)"):
        make_mdp(p, r, s0=3, n=10)
    with pytest.raises(ValueError, match=r"utility must have shape \(21,\)"):
        backward_induction(make_mdp(p, r, 0, 10), jnp.zeros(20), 10)
