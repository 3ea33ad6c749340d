"""MLP nuisance penalty choice (cross-validated, 1/n-scaled) and the nuisance-RMSE diagnostic."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.latent_ate import estimators, report
from lib.latent_ate import learners as lrn


def _rows(n=240, signal=1.0, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (signal * 2 * np.tanh(x[:, 0]) + 0.3 * rng.normal(size=n)).astype(np.float32)
    w = np.r_[np.ones(n - 60), np.zeros(60)].astype(np.float32)
    return x, y, w


def test_cv_mlp_never_looks_at_rows_outside_the_training_set_and_tracks_the_signal():
    """Changing y on rows with w = 0 (the evaluation fold) leaves the predictions unchanged;
    with a strong signal the cross-validated fit beats predicting the mean, with pure noise
    (signal 0) CV picks a fit that is nearly constant."""
    net = lrn.mlp("regression", hidden=(8,), lr=3e-2, steps=60, eval_every=10, penalty="cv",
                  l2_grid=(1e-3, 1.0, 100.0), cv_folds=2)
    fit = jax.jit(net.fit_predict)
    x, y, w = _rows()
    key = jax.random.key(0)
    pred = np.asarray(fit(x, y, w, x, key))
    truth = 2 * np.tanh(x[180:, 0])
    assert np.mean((pred[180:] - truth) ** 2) < 0.25 * np.var(truth)
    y_bad = y.copy()
    y_bad[180:] = 1e6
    np.testing.assert_allclose(np.asarray(fit(x, y_bad, w, x, key)), pred, rtol=1e-5, atol=1e-5)
    x0, y0, w0 = _rows(signal=0.0, seed=1)
    flat = np.asarray(fit(x0, y0, w0, x0, key))
    assert np.std(flat) < 0.3 * np.std(y0)


def test_scaled_penalty_is_the_fixed_penalty_divided_by_the_rows_fitted():
    """penalty='scaled' with constant c equals penalty='fixed' with λ = c / n_fit, n_fit the
    training rows left after the early-stopping hold-out drawn from the same key."""
    x, y, w = _rows(120)
    key = jax.random.key(3)
    k_split, _ = jax.random.split(key)
    val = w * np.asarray(jax.random.uniform(k_split, w.shape) < 0.2)
    n_fit = float((w - val).sum())
    kw = dict(hidden=(8,), lr=1e-2, steps=20, eval_every=5)
    scaled = lrn.mlp("regression", l2=50.0, penalty="scaled", **kw).fit_predict
    fixed = lrn.mlp("regression", l2=50.0 / n_fit, penalty="fixed", **kw).fit_predict
    both = jax.jit(lambda k: (scaled(x, y, w, x, k), fixed(x, y, w, x, k)))
    a, b = both(key)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match=r"mlp penalty must be one of"):
        lrn.mlp("regression", penalty="bayes")
    with pytest.raises(ValueError, match=r"penalty 'cv' needs a non-empty l2_grid"):
        lrn.mlp("regression", penalty="cv", cv_folds=1)


def test_nuisance_rmse_uses_the_true_nuisances_and_marks_absent_ones():
    m = jnp.array([0.3, 0.7, 0.7, 0.3])
    g = jnp.array([0.0, -2.0, -2.0, 0.0])
    truth = estimators.true_nuisances(2.0, m, g)
    np.testing.assert_allclose(truth["ml_l"], [0.6, -0.6, -0.6, 0.6])   # θm + g
    np.testing.assert_allclose(truth["ml_g1"], [2.0, 0.0, 0.0, 2.0])
    preds = {"ml_l": (truth["ml_l"] + jnp.array([1.0, -1.0, 1.0, -1.0]))[None],
             "ml_m": jnp.stack([m, m + 0.1])}
    r = estimators.nuisance_rmse(preds, truth)
    assert float(r["ml_l"]) == pytest.approx(1.0)
    assert float(r["ml_m"]) == pytest.approx(np.sqrt(0.005), rel=1e-5)   # mean over 2 splits
    assert all(np.isnan(float(r[k])) for k in ("ml_g", "ml_g0", "ml_g1"))
    s = report.summarize_rmse({k: jnp.stack([v, v]) for k, v in r.items()})
    assert set(s) == {"ml_l", "ml_m"} and s["ml_l"]["mean"] == pytest.approx(1.0)
    table = report.rmse_table({"settings": {"label": {"estimators": {
        "naive": {"nuisance_rmse": {}}, "dml_x": {"nuisance_rmse": s}}}}})
    assert "| label | dml_x | 1.000 | 0.071 |" in table and "naive" not in table
