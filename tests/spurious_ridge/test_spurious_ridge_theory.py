"""Deterministic equivalents: the fixed point, the Schur complement, closed forms, limits, errors."""
import numpy as np
import pytest

from lib.spurious_ridge import data, simulate, theory


def _random_cov(rng, dim, floor=0.1):
    a = rng.standard_normal((dim, dim))
    return a @ a.T / dim + floor * np.eye(dim)


def _block_iso(d, rho):
    """Σ_xx = Σ_yy = I_d, Σ_xy = ρ I_d."""
    eye = np.eye(d)
    return np.block([[eye, rho * eye], [rho * eye, eye]])


# ----------------------------------------------------------------------------- fixed point


@pytest.mark.parametrize("n", [40, 200])   # over- (rank 100 > n) and under-parameterised
def test_fixed_point_solves_its_equation_and_matches_brute_force(n):
    s = theory.covariance_spectrum(_random_cov(np.random.default_rng(0), 100))[0]
    lams = np.array([0.0, 1e-4, 1e-2, 1.0, 100.0])
    tau = theory.effective_regularization(s, lams, n)
    residual = tau * (1 - theory.degrees_of_freedom(s, tau) / n) - lams
    np.testing.assert_allclose(residual / (1 + lams), 0.0, atol=1e-12)
    assert np.all(tau >= lams)
    # brute force: bisection on h(τ) = τ(1 − df₁/n) − λ over the branch df₁ < n
    for lam, t in zip(lams, tau):
        lo, hi = lam, lam + s.sum() / n
        if lam == 0 and n >= s.size:
            assert t == 0.0
            continue
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            h = mid * (1 - theory.degrees_of_freedom(s, mid)[0] / n) - lam
            lo, hi = (mid, hi) if h < 0 or theory.degrees_of_freedom(s, mid)[0] >= n else (lo, mid)
        assert t == pytest.approx(0.5 * (lo + hi), rel=1e-9)


def test_over_parameterised_ridgeless_limit_has_positive_tau_with_n_degrees_of_freedom():
    s = np.ones(100)
    tau = theory.effective_regularization(s, 0.0, 40)[0]
    assert tau == pytest.approx(100 / 40 - 1)          # df₁ = 100/(1+τ) = n
    assert theory.effective_regularization(s, 0.0, 100)[0] == 0.0


def test_fixed_point_matches_the_sample_resolvent_it_stands_for():
    """(1/D) tr[λ(Σ̂+λ)⁻¹] averaged over Gaussian samples ≈ (1/D) tr[τ(Σ+τ)⁻¹]."""
    rng = np.random.default_rng(1)
    sigma = _random_cov(rng, 60)
    s = theory.covariance_spectrum(sigma)[0]
    factor, n, lams = np.linalg.cholesky(sigma), 120, np.array([0.01, 0.1, 1.0])
    tau = theory.effective_regularization(s, lams, n)
    mc = np.mean([[np.mean(lam / (e + lam)) for lam in lams]
                  for e in (np.linalg.eigvalsh(z.T @ z / n) for z in
                            (rng.standard_normal((n, 60)) @ factor.T for _ in range(40)))], axis=0)
    theory_side = np.array([np.mean(t / (s + t)) for t in tau])
    np.testing.assert_allclose(mc, theory_side, rtol=0.04)
    lam_as_tau = np.array([np.mean(lam / (s + lam)) for lam in lams])   # the naive guess
    assert np.max(np.abs(mc / lam_as_tau - 1)) > 0.3


# ----------------------------------------------------------------------------- Schur and C


def test_independent_blocks_schur_is_the_marginal_and_c_vanishes():
    rng = np.random.default_rng(2)
    sxx, syy = _random_cov(rng, 8), _random_cov(rng, 5)
    sigma = np.block([[sxx, np.zeros((8, 5))], [np.zeros((5, 8)), syy]])
    np.testing.assert_allclose(theory.schur_complement(sigma, 8), syy, atol=1e-14)
    np.testing.assert_allclose(theory.schur_complement(sigma, 8, 0.7), syy + 0.7 * np.eye(5),
                               atol=1e-14)
    de = theory.deterministic_equivalents(sigma, 8, rng.standard_normal(8), 0.3, 20,
                                          np.logspace(-3, 2, 7))
    np.testing.assert_allclose(de.spurious, 0.0, atol=1e-14)


@pytest.mark.parametrize("rho", [0.3, 0.9])
def test_isotropic_blocks_match_the_closed_form(rho):
    """Σ_xx = Σ_yy = I, Σ_xy = ρI: S_τ = ((1+τ)² − ρ²)/(1+τ) I, C = τρ²‖θ*‖²/((1+τ)² − ρ²),
    maximal at τ = √(1 − ρ²)."""
    d = 6
    sigma, theta = _block_iso(d, rho), np.random.default_rng(3).standard_normal(d)
    taus = np.array([0.0, 0.05, 0.5, 2.0, 30.0])
    for tau in taus[1:]:
        np.testing.assert_allclose(theory.schur_complement(sigma, d, tau),
                                   ((1 + tau) ** 2 - rho ** 2) / (1 + tau) * np.eye(d), atol=1e-13)
    closed = taus * rho ** 2 * (theta @ theta) / ((1 + taus) ** 2 - rho ** 2)
    np.testing.assert_allclose(theory.spurious_correlation_schur(sigma, d, theta, taus), closed,
                               rtol=1e-12, atol=1e-13)
    fine = np.linspace(1e-3, 3, 3001)
    peak = fine[np.argmax(theory.spurious_correlation_schur(sigma, d, theta, fine))]
    assert peak == pytest.approx(np.sqrt(1 - rho ** 2), abs=2e-3)


def test_schur_form_equals_the_resolvent_form_and_the_moment_form():
    rng = np.random.default_rng(4)
    sigma, d_x, theta_x, noise, n = _random_cov(rng, 14), 6, rng.standard_normal(6), 0.4, 10
    lams = np.logspace(-3, 2, 9)
    de = theory.deterministic_equivalents(sigma, d_x, theta_x, noise, n, lams)
    theta = np.concatenate([theta_x, np.zeros(8)])
    direct = np.array([np.linalg.solve(sigma + t * np.eye(14), sigma @ theta)[d_x:]
                       @ sigma[d_x:, :d_x] @ theta_x for t in de.tau])
    np.testing.assert_allclose(de.spurious, direct, rtol=1e-10)
    moment = theory.misspecified_equivalents(sigma, d_x, sigma @ theta,
                                             theta @ sigma @ theta + noise ** 2, n, lams)
    np.testing.assert_allclose(moment.spurious, de.spurious, rtol=1e-10)
    np.testing.assert_allclose(moment.loss, de.loss, rtol=1e-10)


def test_limits_lambda_to_infinity_and_to_zero():
    rng = np.random.default_rng(5)
    sigma, d_x, theta_x, noise = _random_cov(rng, 10), 5, rng.standard_normal(5), 0.3
    theta = np.concatenate([theta_x, np.zeros(5)])
    big = theory.deterministic_equivalents(sigma, d_x, theta_x, noise, 30, [1e8])
    assert big.spurious[0] * 1e8 == pytest.approx(np.sum((sigma[d_x:, :d_x] @ theta_x) ** 2), rel=1e-6)
    assert big.loss[0] == pytest.approx(theta @ sigma @ theta + noise ** 2, rel=1e-6)
    n = 30                                            # under-parameterised: OLS, τ = 0
    zero = theory.deterministic_equivalents(sigma, d_x, theta_x, noise, n, [0.0, 1e-9])
    np.testing.assert_allclose(zero.tau, [0.0, 1e-9 / (1 - 10 / n)], rtol=1e-4, atol=1e-15)
    np.testing.assert_allclose(zero.spurious, 0.0, atol=1e-7)
    np.testing.assert_allclose(zero.loss, noise ** 2 * n / (n - 10), rtol=1e-6)


def test_exact_functional_dependence_keeps_c_at_zero_penalty():
    """y = x exactly (singular Schur complement): ridgeless splits θ* over x and y, C = ‖θ*‖²/2."""
    d = 4
    sigma, theta = _block_iso(d, 1.0), np.arange(1.0, d + 1)
    assert theory.spurious_correlation_schur(sigma, d, theta, 0.0)[0] == pytest.approx(theta @ theta / 2)


def test_deterministic_equivalents_track_the_simulation_average():
    for name in ("base", "overparam"):
        design = data.gaussian_design(data.SETTINGS[name], 100, 0.5, np.random.default_rng(0))
        lams = np.logspace(-3, 2, 6)
        sims = simulate.simulate_ridge(design, lams, 12, seed=5)
        de = theory.deterministic_equivalents(design.sigma, 100, design.theta_x, 0.5, design.n, lams)
        np.testing.assert_allclose(sims.spurious_cond.mean(0), de.spurious, rtol=0.08)
        np.testing.assert_allclose(sims.loss_cond.mean(0), de.loss, rtol=0.03)


# ----------------------------------------------------------------------------- trade-off and errors


def test_trade_off_locates_the_increasing_interval():
    lams = np.logspace(-2, 2, 9)
    spurious = np.array([1, 2, 3, 4, 5, 4, 3, 2, 1.0])
    assert theory.trade_off(lams, spurious, (np.arange(9) - 2.0) ** 2) == theory.TradeOff(
        lams[2], lams[4], (lams[0], lams[4]), True)
    late = theory.trade_off(lams, spurious, (np.arange(9) - 6.0) ** 2)
    assert not late.spurious_increasing_at_opt and late.increasing_interval is None


@pytest.mark.parametrize("bad,message", [
    (np.array([[1.0, 2.0], [2.0, 1.0]]), "not positive semi-definite: smallest eigenvalue -1"),
    (np.array([[1.0, 0.5], [0.0, 1.0]]), "not symmetric"),
    (np.ones((2, 3)), r"square \(D, D\) matrix"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "non-finite"),
])
def test_bad_covariance_is_named(bad, message):
    with pytest.raises(ValueError, match=message):
        theory.deterministic_equivalents(bad, 1, np.ones(1), 0.1, 10, [0.1])


def test_negative_lambda_and_bad_n_are_named():
    sigma = np.eye(4)
    with pytest.raises(ValueError, match=r"λ must be >= 0; got λ = -0.5"):
        theory.deterministic_equivalents(sigma, 2, np.ones(2), 0.1, 10, [0.1, -0.5])
    with pytest.raises(ValueError, match="positive integer; got 0"):
        theory.effective_regularization(np.ones(4), 0.1, 0)
    with pytest.raises(ValueError, match="noise level"):
        theory.deterministic_equivalents(sigma, 2, np.ones(2), -1.0, 10, [0.1])
