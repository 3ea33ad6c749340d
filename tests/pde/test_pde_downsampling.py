"""Spatial downsampling: exactness on band-limited fields, cell averages, divisibility."""
import jax.numpy as jnp
import numpy as np
import pytest

from lib.pde import downsampling
from lib.pde.spectral import grid_points_1d, grid_points_2d


def test_spectral_truncation_is_exact_for_resolved_modes_and_drops_the_rest():
    x, y = grid_points_2d(64, 2 * np.pi)
    low = np.sin(3 * x) * np.cos(5 * y) + np.cos(7 * x - 2 * y)
    high = np.cos(20 * x) + np.sin(9 * y)  # not representable below the coarse Nyquist of 16 points
    coarse = downsampling.spectral_truncation(jnp.asarray(np.stack([low + high, low])), 4)
    xc, yc = grid_points_2d(16, 2 * np.pi)
    expected = np.sin(3 * xc) * np.cos(5 * yc) + np.cos(7 * xc - 2 * yc)
    np.testing.assert_allclose(coarse[0], expected, atol=1e-5)
    np.testing.assert_allclose(coarse[1], expected, atol=1e-5)


def test_spectral_truncation_1d():
    x = grid_points_1d(32, 1.0)
    field = jnp.asarray(np.cos(2 * np.pi * 3 * x) + np.sin(2 * np.pi * 12 * x))
    coarse = downsampling.spectral_truncation(field[None], 2, ndim=1)[0]
    np.testing.assert_allclose(coarse, np.cos(2 * np.pi * 3 * grid_points_1d(16, 1.0)), atol=1e-5)


def test_cell_average_equals_the_exact_cell_integral():
    n, factor, k = 64, 4, 3
    x, y = grid_points_2d(n, 2 * np.pi)
    coarse = downsampling.cell_average(jnp.asarray(np.cos(k * x) * np.ones_like(y))[None], factor)[0]
    # Mean of cos(k x) over the points x_j, ..., x_{j+f-1}: a geometric sum.
    h = 2 * np.pi / n
    centre = grid_points_1d(n // factor, 2 * np.pi) + (factor - 1) * h / 2
    expected = np.cos(k * centre) * np.sin(k * h * factor / 2) / (factor * np.sin(k * h / 2))
    np.testing.assert_allclose(coarse, np.broadcast_to(expected, (16, 16)), atol=1e-6)
    assert coarse.shape == (16, 16)


@pytest.mark.parametrize("method", ["spectral", "cell_average"])
def test_grid_not_divisible_by_the_factor_is_rejected(method):
    with pytest.raises(ValueError, match="not divisible by the downsampling factor 3"):
        downsampling.downsample(jnp.zeros((2, 64, 64)), 3, method)


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="unknown downsampling method"):
        downsampling.downsample(jnp.zeros((2, 64, 64)), 2, "nearest")
