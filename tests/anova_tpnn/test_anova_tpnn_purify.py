"""Functional-ANOVA purification: a closed form, the design, invariance, errors."""
import numpy as np
import pytest

from lib.anova_tpnn import data as data_lib, purify


def test_design_holds_every_pair_grid_once_and_every_main_grid_m_times():
    idx = purify.design(5, 7)
    assert idx.shape == (49, 5)
    for j in range(5):
        assert np.all(np.bincount(idx[:, j], minlength=7) == 7)
        for k in range(j + 1, 5):
            assert len({(a, b) for a, b in idx[:, [j, k]]}) == 49


def test_closed_form_x1_x2_plus_x1_hidden_in_the_pair():
    # f(x1, x2) = x1·x2 + x1 + 3, all of it put in the pair; x1 ∈ {0,1,2}, x2 ∈ {1,2,3}
    # (means 1 and 2): pure pair (x1−1)(x2−2), main1 3(x1−1), main2 x2−2, intercept 6.
    grid = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]])
    idx = purify.design(2, 3)
    x = purify.design_points(grid, idx)
    x1, x2 = x[:, 0], x[:, 1]
    names = [(0,), (1,), (0, 1)]
    raw = np.stack([np.zeros(9), np.zeros(9), x1 * x2 + x1 + 3], axis=1)[None]
    out, icpt = purify.purify(raw, idx, names)
    np.testing.assert_allclose(out[0, :, 2], (x1 - 1) * (x2 - 2), atol=1e-12)
    np.testing.assert_allclose(out[0, :, 0], 3 * (x1 - 1), atol=1e-12)
    np.testing.assert_allclose(out[0, :, 1], x2 - 2, atol=1e-12)
    np.testing.assert_allclose(icpt, [6.0])


def test_output_is_unchanged_components_are_pure_and_purifying_twice_changes_nothing():
    rng = np.random.default_rng(0)
    p, m = 4, 5
    idx = purify.design(p, m)
    names = [(j,) for j in range(p)] + [(j, k) for j in range(p) for k in range(j + 1, p)]
    # arbitrary functions of the right variables: tables on the grid indices
    raw = np.zeros((2, m * m, len(names)))
    for c, s in enumerate(names):
        table = rng.normal(size=(2,) + (m,) * len(s)) + 1.5
        raw[:, :, c] = table[(slice(None), *[idx[:, f] for f in s])]
    icpt0 = np.array([0.3, -1.0])
    out, icpt = purify.purify(raw, idx, names, icpt0)
    np.testing.assert_allclose(icpt[:, None] + out.sum(2), icpt0[:, None] + raw.sum(2),
                               atol=1e-12)
    for c, s in enumerate(names):
        if len(s) == 1:
            np.testing.assert_allclose(out[:, :, c].mean(1), 0, atol=1e-12)
        else:
            j, _ = s
            for a in range(m):                      # zero mean over x_k at every x_j
                np.testing.assert_allclose(out[:, idx[:, j] == a, c].mean(1), 0, atol=1e-12)
    again, icpt2 = purify.purify(out, idx, names, icpt)
    np.testing.assert_allclose(again, out, atol=1e-12)
    np.testing.assert_allclose(icpt2, icpt, atol=1e-12)


def test_synthetic_truth_on_the_design_is_already_pure():
    rng = np.random.default_rng(1)
    x_train = rng.uniform(-1, 1, size=(300, data_lib.SYNTH_FEATURES))
    m = purify.grid_size(7, data_lib.SYNTH_FEATURES)
    grid = purify.quantile_grid(x_train, m)
    idx = purify.design(data_lib.SYNTH_FEATURES, m)
    x = purify.design_points(grid, idx)
    _, truth = data_lib.true_components(x, grid)      # exact ANOVA under μ_M
    names = [(j,) for j in range(8)] + [(j, k) for j in range(8) for k in range(j + 1, 8)]
    comps = np.stack([truth.get(s, np.zeros(len(x))) for s in names], axis=1)[None]
    out, icpt = purify.purify(comps, idx, names)
    np.testing.assert_allclose(out, comps, atol=1e-10)
    np.testing.assert_allclose(icpt, 0, atol=1e-10)


def test_grid_and_errors():
    assert purify.grid_size(8, 3) == 11 and purify.grid_size(4, 14) == 17
    with pytest.raises(ValueError, match="must be prime"):
        purify.design(3, 9)
    with pytest.raises(ValueError, match="must be >= the number of features 6"):
        purify.design(6, 5)
    idx = purify.design(3, 3)
    with pytest.raises(ValueError, match="order 1 and 2 only"):
        purify.purify(np.zeros((1, 9, 1)), idx, [(0, 1, 2)])
    with pytest.raises(ValueError, match=r"comps must be \(R, 9, 2\)"):
        purify.purify(np.zeros((1, 8, 2)), idx, [(0,), (1,)])
    grid = purify.quantile_grid(np.array([[0.0], [1.0], [1.0], [1.0]]), 4)
    np.testing.assert_allclose(grid[:, 0], [0, 1, 1, 1])


def test_purified_recovery_is_zero_for_the_truth_with_mains_hidden_in_pairs():
    """purified_scores maps the quantile-transformed design rows back to the raw inputs
    (x_train_raw): the true components, with main 0 and a constant folded into pair (0, 1)
    and main 2 into pair (2, 3), purify back to the truth (recovery 0), while the raw
    error of that representation is large."""
    from lib.anova_tpnn import evaluation, runs, stability
    from lib.anova_tpnn.model import component_names
    from lib.common.config import load_config
    config = load_config("configs/anova_tpnn/anova_tpnn.py:tiny")
    config.eval.purify_grid = 5
    ds = data_lib.load("synth_reg", config.data, config.seed)
    grid, idx, rows = runs.purification_rows(config, ds)
    assert grid.shape == (11, 8) and rows.shape == (121, 8)
    raw_grid = purify.quantile_grid(ds.x_train_raw, 11)
    _, truth = data_lib.true_components(purify.design_points(raw_grid, idx), raw_grid)
    names = component_names(8, 2)
    t = np.stack([truth.get(k, np.zeros(121)) / ds.y_std for k in names], axis=1)
    hidden = t.copy()
    c = {k: i for i, k in enumerate(names)}
    hidden[:, c[(0, 1)]] += hidden[:, c[(0,)]] + 0.7
    hidden[:, c[(0,)]] = 0.0
    hidden[:, c[(2, 3)]] += hidden[:, c[(2,)]]
    hidden[:, c[(2,)]] = 0.0
    comps = np.stack([hidden, hidden])
    out = evaluation.purified_scores(ds, (grid, idx, rows), comps, None, names)
    assert out["recovery_purified"] < 1e-10 and out["stability_purified"] < 1e-10
    assert out["stability_purified_signal"] < 1e-10
    assert stability.recovery_error(comps, t).min() > 0.1
    # replicas (1 + a_r) × truth, plus a large main effect whose sign flips between replicas
    # on a feature without signal: purification is linear, so every signal component's
    # variance / true variance is Var(a) exactly and the null main does not enter it; the
    # uniform unit-RMS average sees only the null main (score 1; positive rescalings score 0)
    power = np.mean(t ** 2, axis=0)
    signal = [k for k in names if power[c[k]] >= stability.SIGNAL_SHARE * power.sum()]
    assert 5 <= len(signal) < len(names)
    null = next(k for k in names if len(k) == 1 and k not in signal)
    a = np.array([-0.2, 0.0, 0.3, 0.1])
    junk = np.sin(3.0 * rows[:, null[0]])
    noisy = np.stack([(1 + ar) * hidden for ar in a])
    noisy[:, :, c[null]] += 5.0 * np.array([1, -1, 1, -1])[:, None] * junk
    out = evaluation.purified_scores(ds, (grid, idx, rows), noisy, None, names)
    assert sorted(out["stability_purified_signal_components"]) == sorted(
        "-".join(map(str, k)) for k in signal)
    np.testing.assert_allclose(out["stability_purified_signal_per_component"], np.var(a),
                               rtol=1e-9)
    assert out["stability_purified_signal"] == pytest.approx(np.var(a), rel=1e-9)
    assert out["stability_purified"] == pytest.approx(1.0 / len(names), rel=1e-5)
