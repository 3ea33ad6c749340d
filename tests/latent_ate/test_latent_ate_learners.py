"""Nuisance learners: closed forms, optimality conditions, the MLP, the baselines."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.latent_ate import baselines
from lib.latent_ate import learners as lrn


def _data(n=200, p=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)).astype(np.float32)
    y = (x @ np.arange(1.0, p + 1) + 0.5 + rng.normal(size=n)).astype(np.float32)
    w = (rng.uniform(size=n) < 0.7).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(y), jnp.asarray(w)


def test_ridge_matches_the_normal_equations_and_gcv_picks_from_the_grid():
    x, y, w = _data()
    rows = np.asarray(w) > 0
    xa = np.c_[np.ones(rows.sum()), np.asarray(x)[rows]]
    ols = np.linalg.lstsq(xa, np.asarray(y)[rows], rcond=None)[0]
    coef, intercept, _ = lrn.ridge_fit(x, y, w, (0.0,))
    np.testing.assert_allclose(np.r_[intercept, coef], ols, rtol=1e-4, atol=1e-4)
    # λ = 5: (XᶜᵀXᶜ + 5I)β = Xᶜᵀyᶜ on the weighted rows
    xc = np.asarray(x)[rows] - np.asarray(x)[rows].mean(0)
    yc = np.asarray(y)[rows] - np.asarray(y)[rows].mean()
    ref = np.linalg.solve(xc.T @ xc + 5 * np.eye(4), xc.T @ yc)
    np.testing.assert_allclose(lrn.ridge_fit(x, y, w, (5.0,))[0], ref, rtol=1e-4)
    grid = (1e-3, 1.0, 1e3, 1e6)
    coef_g, _, lam = lrn.ridge_fit(x, y, w, grid)
    assert float(lam) < 1e3                                      # signal is strong: small λ
    np.testing.assert_allclose(coef_g, lrn.ridge_fit(x, y, w, (float(lam),))[0], rtol=1e-3)


def test_ridge_gcv_dual_form_equals_the_primal_form():
    """n < p takes the n × n eigendecomposition; zero-weight padding rows (n > p) force the
    p × p one on the same data: same λ, same coefficients."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 60)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=40)).astype(np.float32)
    w = (rng.uniform(size=40) < 0.8).astype(np.float32)
    grid = (0.1, 1.0, 10.0, 100.0)
    c_dual, b_dual, l_dual = lrn.ridge_fit(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), grid)
    pad = lambda a: np.concatenate([a, np.zeros((30,) + a.shape[1:], np.float32)])
    c_pr, b_pr, l_pr = lrn.ridge_fit(jnp.asarray(pad(x)), jnp.asarray(pad(y)),
                                     jnp.asarray(pad(w)), grid)
    assert float(l_dual) == float(l_pr)
    np.testing.assert_allclose(c_dual, c_pr, rtol=2e-3, atol=2e-4)
    assert float(b_dual) == pytest.approx(float(b_pr), abs=1e-3)


def test_logistic_newton_reaches_a_zero_gradient():
    x, _, w = _data(300)
    y = (x[:, 0] - x[:, 1] + jax.random.normal(jax.random.key(0), (300,)) > 0).astype(jnp.float32)
    coef, b = lrn.logistic_fit(x, y, w, l2=0.5)
    p = jax.nn.sigmoid(x @ coef + b)
    grad_b = float((w * (p - y)).sum())
    grad = np.asarray(x.T @ (w * (p - y)) + 0.5 * coef)
    assert abs(grad_b) < 1e-3 and np.abs(grad).max() < 1e-3
    assert float(coef[0]) > 0 > float(coef[1])


def test_lasso_satisfies_the_kkt_conditions():
    x, y, w = _data(300, 6)
    alpha = 0.5
    coef, b = lrn.lasso_fit(x, y, w, alpha, num_iter=2000)
    r = w * (y - b - x @ coef)
    g = np.asarray(x.T @ r / w.sum())                            # −∂(loss)/∂β
    c = np.asarray(coef)
    active = np.abs(c) > 1e-6
    np.testing.assert_allclose(g[active], alpha * np.sign(c[active]), atol=2e-3)
    assert np.all(np.abs(g[~active]) <= alpha + 2e-3)
    assert abs(float(r.sum())) < 1e-2                            # intercept is unpenalised


def test_mlp_fits_a_nonlinear_function_and_ignores_rows_outside_the_training_set():
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(400, 2)).astype(np.float32)
    y = np.sin(2 * x[:, 0]) + 0.1 * rng.normal(size=400).astype(np.float32)
    w = np.r_[np.ones(300), np.zeros(100)].astype(np.float32)
    net = lrn.mlp("regression", hidden=(32, 32), lr=1e-2, steps=400, eval_every=20)
    fit = jax.jit(net.fit_predict)
    pred = np.asarray(fit(jnp.asarray(x), jnp.asarray(y), jnp.asarray(w), jnp.asarray(x),
                          jax.random.key(0)))
    test_mse = np.mean((pred[300:] - np.sin(2 * x[300:, 0])) ** 2)
    assert test_mse < 0.1 * np.var(y)                            # learned the sine
    y_bad = y.copy()
    y_bad[300:] = 1e6                                             # rows with w = 0: no effect
    pred_bad = np.asarray(fit(jnp.asarray(x), jnp.asarray(y_bad), jnp.asarray(w),
                              jnp.asarray(x), jax.random.key(0)))
    np.testing.assert_allclose(pred, pred_bad, rtol=1e-4, atol=1e-4)


def test_mlp_classifier_returns_probabilities():
    x, _, w = _data(300)
    y = (x[:, 0] > 0).astype(jnp.float32)
    net = lrn.mlp("classification", hidden=(16,), lr=1e-2, steps=100, eval_every=10)
    p = np.asarray(jax.jit(net.fit_predict)(x, y, w, x, jax.random.key(1)))
    assert p.min() >= 0 and p.max() <= 1
    assert np.mean((p > 0.5) == np.asarray(y)) > 0.9


def test_learner_argument_errors_are_named():
    with pytest.raises(ValueError, match=r"ridge lambdas must be a non-empty sequence"):
        lrn.ridge((-1.0,))
    with pytest.raises(ValueError, match=r"mlp task must be one of"):
        lrn.mlp("ranking")
    with pytest.raises(ValueError, match=r"0 < val_fraction < 1"):
        lrn.mlp("regression", val_fraction=1.0)


def test_naive_and_oracle_are_the_ols_closed_forms():
    rng = np.random.default_rng(1)
    n = 500
    c = (rng.uniform(size=n) < 0.4).astype(float)
    d = (rng.uniform(size=n) < np.where(c > 0, 0.7, 0.3)).astype(float)
    y = 2 * d - 2 * c + rng.normal(size=n)
    t, se = baselines.naive(jnp.asarray(y), jnp.asarray(d))
    assert float(t) == pytest.approx(y[d == 1].mean() - y[d == 0].mean(), rel=1e-4)
    s2 = ((y - np.where(d == 1, y[d == 1].mean(), y[d == 0].mean())) ** 2).sum() / (n - 2)
    assert float(se) == pytest.approx(np.sqrt(s2 * (1 / (d == 1).sum() + 1 / (d == 0).sum())),
                                      rel=1e-3)
    t_or, _ = baselines.oracle(jnp.asarray(y), jnp.asarray(d), jnp.asarray(c))
    ref = np.linalg.lstsq(np.c_[np.ones(n), d, c], y, rcond=None)[0][1]
    assert float(t_or) == pytest.approx(ref, rel=1e-4)
    # a constant (dead-unit) column does not break the linear S-learner
    z = np.c_[c, np.zeros(n)]
    t_s, se_s = baselines.s_linear(jnp.asarray(y), jnp.asarray(d), jnp.asarray(z))
    assert float(t_s) == pytest.approx(ref, rel=1e-3) and np.isfinite(float(se_s))
