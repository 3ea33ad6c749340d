"""Metrics against closed forms / scikit-image; data loaders, masks and their errors."""
import numpy as np
import pytest
from skimage.metrics import structural_similarity

from lib.kar_peak import metrics, tasks


def test_kar_peak_psnr_and_ssim():
    rng = np.random.default_rng(0)
    img = rng.random((20, 20, 1))
    pred = np.clip(img + 0.1 * rng.standard_normal(img.shape), 0, 1)
    missing = rng.random((20, 20)) < 0.5
    mse = np.mean(((pred - img)[missing]) ** 2)
    assert metrics.psnr_missing(pred, img, missing) == pytest.approx(10 * np.log10(1 / mse))
    _, ref = structural_similarity(img[..., 0], pred[..., 0], data_range=1.0, gaussian_weights=True,
                                   sigma=1.5, use_sample_covariance=False, full=True)
    np.testing.assert_allclose(metrics.ssim_map(pred, img), ref, rtol=1e-6, atol=1e-8)
    assert metrics.ssim_missing(pred, img, missing) == pytest.approx(ref[missing].mean())
    assert metrics.ssim_missing(img, img, missing) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no missing pixel"):
        metrics.psnr_missing(pred, img, np.zeros((20, 20), bool))
    with pytest.raises(ValueError, match="mask shape"):
        metrics.ssim_missing(pred, img, missing[:10])


def test_kar_peak_alignment_measures():
    rng = np.random.default_rng(1)
    y = rng.standard_normal(15)
    k = np.outer(y, y)
    assert float(metrics.target_alignment(k, y)) == pytest.approx(1.0, abs=1e-6)
    assert float(metrics.target_alignment(k + 5.0, y + 0.0, centered=True)) == pytest.approx(
        float(metrics.target_alignment(k, y, centered=True)), abs=1e-6)   # centring removes constants
    assert float(metrics.alignment(np.eye(15), k)) == pytest.approx(np.sum(y ** 2) / (np.sqrt(15) * np.sum(y ** 2)))


def test_kar_peak_masks_and_bad_inputs():
    r = tasks.make_mask("random", 32, fraction=0.5, seed=1)
    assert 0.4 < r.mean() < 0.6
    p = tasks.make_mask("patch", 32, fraction=0.25, patch=4)
    assert p.mean() == pytest.approx(0.25)
    assert np.all(p.reshape(8, 4, 8, 4).all(axis=(1, 3)) | ~p.reshape(8, 4, 8, 4).any(axis=(1, 3)))
    t = tasks.make_mask("textural", 32)
    assert 0.05 < t.mean() < 0.6
    with pytest.raises(ValueError, match="no observed pixel"):
        tasks.check_mask(np.ones((8, 8), bool), (8, 8))
    with pytest.raises(ValueError, match="mask shape"):
        tasks.check_mask(np.zeros((8, 4), bool), (8, 8))
    with pytest.raises(ValueError, match=r"\(H, W\) or \(H, W, C\)"):
        tasks.check_image(np.zeros((2, 8, 8, 1)))
    with pytest.raises(ValueError, match="unknown mask kind"):
        tasks.make_mask("stripes", 8)
    with pytest.raises(ValueError, match="is grey"):
        tasks.load_image("camera", 16, colour=True)


def test_kar_peak_images_and_grid():
    cam = tasks.load_image("camera", 16)
    col = tasks.load_image("coffee", 16, colour=True)
    assert cam.shape == (16, 16, 1) and col.shape == (16, 16, 3)
    assert 0.0 <= cam.min() and cam.max() <= 1.0 and cam.std() > 0.05
    g = tasks.grid_coords(3, 4)
    assert g.shape == (12, 2) and np.allclose(g[0], [-1, -1]) and np.allclose(g[-1], [1, 1])
    assert np.allclose(g[1], [-1, -1 + 2 / 3])                       # row-major


def test_kar_peak_regression_optimal_kernel_closed_form():
    d = tasks.gp_regression(n_train=6, n_test=40, max_freq=8, centre=3, width=1.5, noise=1e-4,
                            seed=0, num_draws=3)
    assert d.y_train.shape == (6, 3) and d.k_opt.shape == (3, 40, 40)
    # posterior mean interpolates near-noiseless data: evaluate the mean formula at the train points
    s = tasks.band_spectrum(8, 3, 1.5)
    kxx = tasks.band_kernel(d.x_train, d.x_train, s) + (1e-8 + 1e-8) * np.eye(6)
    np.testing.assert_allclose(kxx @ np.linalg.solve(kxx, d.y_train), d.y_train, atol=1e-4)
    for v in range(3):                                               # K* = μμᵀ + Σ is PSD, ⪰ μμᵀ
        assert np.linalg.eigvalsh(d.k_opt[v].astype(np.float64)).min() > -1e-4
        resid = d.k_opt[v] - np.outer(d.post_mean[:, v], d.post_mean[:, v])
        np.testing.assert_allclose(resid, resid.T, atol=1e-5)
    assert np.mean((d.post_mean - d.f_test) ** 2) < np.mean(d.f_test ** 2)
