"""Data: input checks, quantile transform, exactly known synthetic components, resamples."""
import ml_collections
import numpy as np
import pytest

from lib.anova_tpnn import data

CFG = ml_collections.ConfigDict(dict(test_fraction=0.2, val_fraction=0.125, synth_n=300,
                                     synth_noise=0.5,
                                     breast_features=10, madelon_n=200, madelon_features=12,
                                     madelon_informative=5, madelon_redundant=3))


def test_nan_and_constant_features_get_errors_naming_the_feature():
    x = np.random.default_rng(0).normal(size=(20, 3))
    x[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"\['b'\] contain NaN or infinite values"):
        data.check_features(x, ("a", "b", "c"))
    x = np.random.default_rng(0).normal(size=(20, 3))
    x[:, 2] = 3.0
    with pytest.raises(ValueError, match=r"\['c'\] are constant on the training sample"):
        data.check_features(x, ("a", "b", "c"))
    with pytest.raises(ValueError, match="2-D array with at least 2 rows"):
        data.check_features(np.zeros(5), ("a",))


def test_quantile_transform_is_monotone_onto_minus_one_one_fitted_on_train_only():
    rng = np.random.default_rng(1)
    x_tr, x_te = rng.lognormal(size=(200, 2)), rng.lognormal(size=(50, 2)) * 3
    q_tr, q_te = data.quantile_transform(x_tr, x_te)
    assert q_tr.min() >= -1 and q_tr.max() <= 1 and q_te.min() >= -1 and q_te.max() <= 1
    for j in range(2):
        order = np.argsort(x_tr[:, j])
        assert np.all(np.diff(q_tr[order, j]) >= 0)
    np.testing.assert_allclose(np.mean(q_tr, axis=0), 0.0, atol=0.02)   # ≈ uniform


def test_true_components_decompose_f_exactly_and_are_centred_on_the_training_marginals():
    rng = np.random.default_rng(2)
    x_tr, x_ev = rng.uniform(-1, 1, (60, 8)), rng.uniform(-1, 1, (40, 8))
    icpt, comps = data.true_components(x_ev, x_tr)
    np.testing.assert_allclose(icpt + sum(comps.values()), data.synth_function(x_ev),
                               atol=1e-10)
    _, on_train = data.true_components(x_tr, x_tr)
    for key, v in on_train.items():
        if len(key) == 1:
            assert abs(v.mean()) < 1e-10, key
    # pair (0, 1): for each fixed x_1 from the sample, the mean over the sample's x_0 is 0
    grid = np.zeros((60 * 60, 8))
    grid[:, 0] = np.repeat(x_tr[:, 0], 60)
    grid[:, 1] = np.tile(x_tr[:, 1], 60)
    _, on_grid = data.true_components(grid, x_tr)
    np.testing.assert_allclose(on_grid[(0, 1)].reshape(60, 60).mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(on_grid[(0, 1)].reshape(60, 60).mean(axis=1), 0.0, atol=1e-10)


def test_loaders_give_standardised_targets_binary_labels_and_truth_for_synthetic_sets():
    reg = data.load("synth_reg", CFG)
    assert reg.x_train.shape == (210, 8) and reg.x_val.shape == (30, 8)
    assert reg.x_test.shape == (60, 8) and reg.y_val.shape == (30,)
    assert abs(reg.y_train.mean()) < 1e-5 and abs(reg.y_train.std() - 1) < 1e-4
    assert set(reg.truth) == {(0,), (1,), (2,), (3,), (4,), (5,), (0, 1), (2, 3), (4, 5)}
    assert reg.truth[(0, 1)].shape == (60,)
    clf = data.load("madelon", CFG)
    assert clf.num_features == 12 and set(np.unique(clf.y_train)) == {0.0, 1.0}
    assert clf.truth is None and clf.x_train.min() >= -1 and clf.x_train.max() <= 1
    # validation rows: disjoint from the training rows, transformed with the training fit
    # (so not exactly uniform), labels stratified; none at all for val_fraction = 0
    dia = data.load("diabetes", CFG)
    assert (len(dia.x_train), len(dia.x_val), len(dia.x_test)) == (308, 45, 89)
    assert not set(map(tuple, dia.x_val.tolist())) & set(map(tuple, dia.x_train.tolist()))
    assert abs(clf.y_val.mean() - clf.y_train.mean()) < 0.05
    no_val = data.load("synth_reg", ml_collections.ConfigDict({**CFG, "val_fraction": 0.0}))
    assert no_val.x_train.shape == (240, 8) and no_val.x_val.shape == (0, 8)
    with pytest.raises(ValueError, match="unknown data set 'iris'"):
        data.load("iris", CFG)


def test_resample_weights():
    w = data.resample_weights(50, 4, "resample", 0.8, seed=0)
    assert w.shape == (50, 4) and np.all(w.sum(axis=0) == 40)
    assert len({tuple(col) for col in w.T}) == 4                  # different subsets
    assert np.all(data.resample_weights(50, 4, "seed", 0.8, 0) == 1)
    with pytest.raises(ValueError, match="unknown replica mode 'boot'"):
        data.resample_weights(50, 4, "boot", 0.8, 0)
