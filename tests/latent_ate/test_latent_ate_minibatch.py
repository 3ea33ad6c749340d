"""Minibatch (scikit-learn style) MLP nuisances: equivalence with full-batch training, the
training rows only, argument errors, and the config checks of the official variant."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from configs.latent_ate import latent_ate
from lib.common.config import ConfigError
from lib.latent_ate import learners as lrn


def _rows(n=120, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (2 * np.tanh(x[:, 0]) + 0.3 * rng.normal(size=n)).astype(np.float32)
    w = np.r_[np.ones(n - 30), np.zeros(30)].astype(np.float32)
    return jnp.asarray(x), jnp.asarray(y), jnp.asarray(w)


def test_one_batch_per_epoch_is_full_batch_training():
    """batch_size >= the row slots: every epoch is one Adam step on all training rows, so T
    epochs equal T full-batch steps from the same initialisation (final parameters kept)."""
    x, y, w = _rows()
    mini = lrn.mlp("regression", (16,), 1e-2, penalty="fixed", l2=1e-3, batch_size=128,
                   epochs=25, early_stopping=False)
    full = lrn.mlp("regression", (16,), 1e-2, steps=25, eval_every=1, penalty="fixed",
                   l2=1e-3, early_stopping=False)
    key = jax.random.key(3)
    a = np.asarray(jax.jit(mini.fit_predict)(x, y, w, x, key))
    b = np.asarray(jax.jit(full.fit_predict)(x, y, w, x, key))
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    assert np.std(a) > 0.3                                       # it did move from the init


def test_minibatch_mlp_learns_and_never_sees_rows_outside_the_training_set():
    x, y, w = _rows(400)
    net = lrn.mlp("regression", (32,), 1e-2, penalty="fixed", l2=1e-6, batch_size=50,
                  epochs=40, early_stopping=False)
    fit = jax.jit(net.fit_predict)
    key = jax.random.key(0)
    pred = np.asarray(fit(x, y, w, x, key))
    truth = 2 * np.tanh(np.asarray(x)[370:, 0])
    assert np.mean((pred[370:] - truth) ** 2) < 0.1 * np.var(truth)
    y_bad = y.at[370:].set(1e6)
    np.testing.assert_allclose(np.asarray(fit(x, y_bad, w, x, key)), pred, rtol=1e-5, atol=1e-5)


def test_minibatch_argument_and_config_errors_are_named():
    with pytest.raises(ValueError, match=r"minibatch training needs batch_size >= 1 and epochs"):
        lrn.mlp("regression", batch_size=32)
    with pytest.raises(ValueError, match=r"early_stopping=False needs penalty 'fixed' or"):
        lrn.mlp("regression", penalty="cv", early_stopping=False)
    c = latent_ate.get_config("official")
    assert c.mlp.l2_outcome == pytest.approx(2 * 1e-4 / 200)    # scikit-learn alpha on B = 200
    latent_ate.validate(c)
    c.mlp.epochs = 0
    with pytest.raises(ConfigError, match=r"'mlp.epochs' = 0 is not allowed"):
        latent_ate.validate(c)


def test_ols_with_a_dead_feature_is_the_minimum_norm_least_squares_fit():
    """A constant column makes XᶜᵀXᶜ singular (the CNN's dead units): OLS stays finite and
    equals numpy's minimum-norm lstsq on the centred data (the dead coefficient is 0)."""
    rng = np.random.default_rng(2)
    x = np.c_[rng.normal(size=(80, 3)), np.ones(80)].astype(np.float32)
    y = (x[:, 0] - 2 * x[:, 2] + 0.1 * rng.normal(size=80)).astype(np.float32)
    coef, b, _ = lrn.ridge_fit(jnp.asarray(x), jnp.asarray(y), jnp.ones(80), (0.0,))
    xc, yc = x - x.mean(0), y - y.mean()
    ref = np.linalg.lstsq(xc, yc, rcond=None)[0]
    np.testing.assert_allclose(np.asarray(coef), ref, atol=1e-4)
    assert abs(float(coef[3])) < 1e-5 and np.isfinite(float(b))
