"""Random features: Hermite coefficients, the exact C by Stein's lemma, the equivalent ridge."""
import numpy as np
import pytest

from lib.spurious_ridge import data, estimates as est, random_features as rf


def test_hermite_coefficients_closed_forms():
    assert rf.hermite_coefficients("linear", 2.0) == pytest.approx((0.0, np.sqrt(2.0), 0.0), abs=1e-12)
    mu0, mu1, mustar = rf.hermite_coefficients("erf")
    assert mu0 == pytest.approx(0.0, abs=1e-14)
    assert mu1 == pytest.approx(2 / np.sqrt(3 * np.pi), rel=1e-10)            # E[erf'(G)]
    assert mu1 ** 2 + mustar ** 2 == pytest.approx(2 / np.pi * np.arcsin(2 / 3), rel=1e-8)
    with pytest.raises(ValueError, match="unknown activation 'relu'"):
        rf.hermite_coefficients("relu")


def test_exact_rf_spurious_correlation_matches_monte_carlo():
    design = data.gaussian_design(data.SETTINGS["strong_corr"], 4, 0.2, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    w, a = rf.draw_weights(rng, 6, 8), rng.standard_normal((2, 6))
    cov_yg = design.sigma[4:, :4] @ design.theta_x
    exact = rf.rf_spurious_correlation(a, w, design.sigma, 4, cov_yg, "tanh")
    z, _, g = data.sample(design, 400_000, rng)
    z_tilde, _, _ = data.sample(design, 400_000, rng)
    f = rf.features(np.concatenate([z_tilde[:, :4], z[:, 4:]], axis=1), w, "tanh") @ a.T
    mc = np.mean((f - f.mean(0)) * g[:, None], axis=0)
    se = np.std(f * g[:, None], axis=0) / np.sqrt(len(g))
    assert np.all(np.abs(exact - mc) < 4 * se)
    assert np.max(np.abs(exact)) > 10 * np.max(se)      # not trivially zero


def test_equivalent_ridge_fixed_point_limits():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((50, 30))
    evals = est.gram_eig(z).evals
    lam_k, lam_tilde = rf.equivalent_ridge([0.0, 0.01], 10 ** 9, evals, 50, 30, 30.0, "tanh")
    np.testing.assert_allclose(lam_k, [0.0, 0.01], rtol=1e-6, atol=1e-12)   # p → ∞: λ_K = λ
    _, mu1, mustar = rf.hermite_coefficients("tanh")
    assert lam_tilde[0] == pytest.approx(30.0 / mu1 ** 2 * mustar ** 2 / 50)
    assert rf.equivalent_ridge([0.0], 60, evals, 50, 30, 30.0, "tanh")[0][0] == 0.0  # p >= n
    lam_k = rf.equivalent_ridge([0.0], 20, evals, 50, 30, 30.0, "tanh")[0][0]       # p < n
    kappa = mu1 ** 2 * 50 * np.r_[evals, np.zeros(20)] / 30.0 + mustar ** 2
    assert lam_k > 0
    assert np.sum(kappa / (kappa + 50 * lam_k)) == pytest.approx(20, rel=1e-8)        # df_K = p


def test_random_features_spurious_correlation_equals_linear_ridge_at_the_equivalent_penalty():
    """Averaged over W, C(RF at λ) ≈ C(linear ridge at λ̃) on the same data, at p < n and p > n;
    the naive penalty (λ̃ without the μ*² term) is far off."""
    design = data.gaussian_design(data.SETTINGS["base"], 60, 0.5, np.random.default_rng(3))
    cov_yg = design.sigma[60:, :60] @ design.theta_x
    rng = np.random.default_rng(4)
    z, _, g = data.sample(design, design.n, rng)
    eig, lams = est.gram_eig(z), np.array([1e-5, 1e-3])
    _, mu1, _ = rf.hermite_coefficients("tanh")
    for p in (60, 720):
        c_rf = np.mean([rf.rf_spurious_correlation(
            est.ridge_path(rf.features(z, w, "tanh"), g, lams), w, design.sigma, 60, cov_yg, "tanh")
            for w in (rf.draw_weights(rng, p, 120) for _ in range(12))], axis=0)
        _, lam_tilde = rf.equivalent_ridge(lams, p, eig.evals, design.n, 120, 120.0, "tanh")
        c_lin = est.spurious_correlation(est.ridge_path(z, g, lam_tilde, eig), 60, cov_yg)
        np.testing.assert_allclose(c_rf, c_lin, rtol=0.12)
    naive = est.spurious_correlation(est.ridge_path(z, g, 120.0 / mu1 ** 2 * lams, eig), 60, cov_yg)
    assert abs(naive[0] / c_rf[0] - 1) > 0.3
