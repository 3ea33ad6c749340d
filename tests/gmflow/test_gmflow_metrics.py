"""Metrics against closed forms: SWD of a shift, MMD/FD zeros, k-NN precision/recall limits,
the checkerboard in-square fraction, saturation."""
import numpy as np
import pytest

from lib.gmflow import metrics, toys


def test_sliced_wasserstein_of_a_shift():
    """Shifting by c moves each projection by c·θ, so SW₂ = √E[(c·θ)²] = |c|/√2 in 2-D."""
    x = np.random.default_rng(0).standard_normal((2000, 2))
    c = np.array([0.6, -0.8])
    assert metrics.sliced_wasserstein(x, x) == 0.0
    np.testing.assert_allclose(metrics.sliced_wasserstein(x, x + c, num_projections=4000),
                               1 / np.sqrt(2), rtol=0.03)
    with pytest.raises(ValueError, match="sliced_wasserstein"):
        metrics.sliced_wasserstein(x, x[:, :1])


def test_mmd_and_frechet_distance():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1500, 3))
    assert abs(metrics.mmd_rbf(x, x)) < 1e-10
    assert metrics.mmd_rbf(x, x + 1.0) > 100 * metrics.mmd_rbf(x, rng.standard_normal((1500, 3)))
    np.testing.assert_allclose(metrics.frechet_distance(x, x), 0.0, atol=1e-6)
    # same covariance, mean shift c: FD = |c|²
    np.testing.assert_allclose(metrics.frechet_distance(x, x + np.array([1.0, 2.0, 0.0])), 5.0,
                               rtol=1e-6)
    # N(0, I) vs N(0, 4I) in 3-D: FD = tr(I + 4I − 2·2I) = 3
    np.testing.assert_allclose(metrics.frechet_distance(rng.standard_normal((40000, 3)),
                                                        2 * rng.standard_normal((40000, 3))),
                               3.0, rtol=0.05)


def test_knn_precision_recall_limits():
    rng = np.random.default_rng(2)
    real = rng.standard_normal((400, 4))
    assert metrics.knn_precision_recall(real, real, 3) == (1.0, 1.0)
    assert metrics.knn_precision_recall(real, real + 100.0, 3) == (0.0, 0.0)
    # a fake set collapsed onto a few real points is precise but has low recall
    prec, rec = metrics.knn_precision_recall(real, np.repeat(real[:5], 80, axis=0), 3)
    assert prec == 1.0 and rec < 0.2
    with pytest.raises(ValueError, match="more than k"):
        metrics.knn_precision_recall(real[:3], real, 3)


def test_checkerboard_in_square_fraction():
    x = toys.checkerboard(np.random.default_rng(3), 5000)
    assert toys.in_white_square(x).mean() == 1.0
    assert np.abs(x).max() <= toys.CHECKER_SCALE
    assert toys.in_white_square(x + np.array([2.0, 0.0])).mean() < 0.3    # moved one square
    assert not toys.in_white_square(np.array([[5.0, 5.0]]))[0]


def test_saturation_and_out_of_range():
    assert metrics.saturation(np.full((2, 8, 8, 1), 0.5)) == 0.0
    assert metrics.saturation(np.array([0.0, 1.0, 1.5, -2.0])) == 1.0
    assert metrics.out_of_range(np.array([0.0, 1.0, 1.5, -2.0])) == 0.5


def test_gaussian_grid_samples_follow_its_gm():
    x = toys.gaussian_grid(np.random.default_rng(4), 20000)
    np.testing.assert_allclose(x.mean(0), 0.0, atol=0.03)
    np.testing.assert_allclose(x.var(0), 2.0 + toys.GRID_STD ** 2, rtol=0.03)   # 5 centres -2..2
