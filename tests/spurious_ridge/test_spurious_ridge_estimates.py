"""The ridge path and the finite-sample C and L: limits, closed forms, estimators."""
import numpy as np
import pytest

from lib.spurious_ridge import data, estimates as est


def _problem(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)), rng.standard_normal(n)


@pytest.mark.parametrize("n,dim", [(50, 20), (20, 50)])   # primal and dual branches
def test_ridge_path_matches_a_direct_solve_and_zero_penalty_is_least_squares(n, dim):
    z, g = _problem(n, dim)
    lams = np.array([0.0, 1e-10, 0.3, 5.0])
    path = est.ridge_path(z, g, lams)
    for lam, theta in zip(lams[2:], path[2:]):
        np.testing.assert_allclose(theta, np.linalg.solve(z.T @ z / n + lam * np.eye(dim), z.T @ g / n),
                                   rtol=1e-9, atol=1e-12)
    least_squares = np.linalg.lstsq(z, g, rcond=None)[0]      # minimum-norm when dim > n
    np.testing.assert_allclose(path[0], least_squares, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(path[1], least_squares, rtol=1e-6, atol=1e-8)


def test_large_penalty_sends_predictions_and_c_to_zero_like_one_over_lambda():
    design = data.gaussian_design(data.SETTINGS["base"], 10, 0.5, np.random.default_rng(1))
    z, _, g = data.sample(design, design.n, np.random.default_rng(2))
    cov_yg = design.sigma[10:, :10] @ design.theta_x
    lams = np.array([1e4, 1e6, 1e8])
    path = est.ridge_path(z, g, lams)
    assert np.all(np.abs(z @ path.T) < 1e3 / lams)                      # predictions → 0
    c = est.spurious_correlation(path, 10, cov_yg)
    limit = (z.T @ g / len(g))[10:] @ cov_yg                               # λ·C → (ZᵀG/n)_yᵀΣ_yxθ*_x
    np.testing.assert_allclose(c * lams, limit, rtol=1e-3)
    assert abs(c[-1]) < 1e-6


def test_noise_trace_equals_the_explicit_matrix_form():
    for n, dim in [(40, 15), (15, 40)]:
        z, _ = _problem(n, dim, seed=3)
        a = np.random.default_rng(4).standard_normal((dim, dim))
        sigma, lams = a @ a.T / dim, np.array([0.0, 0.1, 2.0])
        got = est.ridge_noise_trace(z, sigma, lams)
        for lam, value in zip(lams, got):
            amat = np.linalg.pinv(z.T @ z / n + lam * np.eye(dim)) @ z.T / n     # θ̂ = A G
            assert value == pytest.approx(np.trace(sigma @ amat @ amat.T), rel=1e-7)


def test_exact_c_and_l_of_a_linear_model_match_their_definitions():
    design = data.gaussian_design(data.SETTINGS["weak_corr"], 5, 0.3, np.random.default_rng(5))
    theta = np.random.default_rng(6).standard_normal(10)
    rng = np.random.default_rng(7)
    z, _, g = data.sample(design, 400_000, rng)
    z_tilde, _, _ = data.sample(design, 400_000, rng)                    # independent x̃
    pred_spurious = np.concatenate([z_tilde[:, :5], z[:, 5:]], axis=1) @ theta
    c_mc = np.mean(pred_spurious * g)
    c = est.spurious_correlation(theta, 5, design.sigma[5:, :5] @ design.theta_x)
    assert c == pytest.approx(c_mc, abs=4 * np.std(pred_spurious * g) / np.sqrt(len(g)))
    l_mc = np.mean((z @ theta - g) ** 2)
    assert est.test_loss(theta, design.sigma, data.theta_star(design), 0.3) == pytest.approx(l_mc, rel=0.01)


def test_empirical_c_recovers_the_exact_value_and_vanishes_for_core_only_models():
    design = data.gaussian_design(data.SETTINGS["strong_corr"], 5, 0.3, np.random.default_rng(8))
    rng = np.random.default_rng(9)
    z, _, g = data.sample(design, 100_000, rng)
    cov_yg = design.sigma[5:, :5] @ design.theta_x
    thetas = np.stack([np.r_[np.zeros(5), cov_yg], np.r_[np.ones(5), np.zeros(5)]])
    c_hat = est.empirical_spurious_correlation(lambda u: u @ thetas.T, z[:, :5], z[:, 5:], g, rng, 2)
    exact = est.spurious_correlation(thetas, 5, cov_yg)
    assert exact[0] > 0.3 and exact[1] == 0.0
    np.testing.assert_allclose(c_hat, exact, atol=0.02)
    np.testing.assert_allclose(est.empirical_test_loss(np.zeros((3, 2)), np.array([1.0, -1.0, 2.0])),
                               [2.0, 2.0])
