"""KAR: the alignment form vanishes exactly at Θ ∝ K*; the smoother forms against dense matrices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.kar_peak import kar


def _psd(key, n, r=None):
    a = jax.random.normal(key, (n, r or n))
    return a @ a.T


def test_kar_peak_ntk_form_zero_when_ntk_equals_target_kernel():
    target = _psd(jax.random.key(0), 12)
    assert abs(float(kar.kar_ntk(target, target))) < 1e-6
    assert abs(float(kar.kar_ntk(3.7 * target, target))) < 1e-6          # scale-invariant
    assert abs(float(kar.kar_ntk(target, target, centered=True))) < 1e-6
    other = _psd(jax.random.key(1), 12)
    assert float(kar.kar_ntk(other, target)) > 1e-3
    # gradient of KAR pulls a kernel towards the target
    step = other - 0.1 * jax.grad(lambda k: kar.kar_ntk(k, target))(other) * jnp.linalg.norm(other)
    assert float(kar.kar_ntk(step, target)) < float(kar.kar_ntk(other, target))


def _dense_p(a):
    k = np.asarray(a @ a.T, np.float64)
    np.fill_diagonal(k, 0.0)
    return k, k / k.sum(1, keepdims=True)


def test_kar_peak_smoother_matches_dense_matrix():
    a = jax.nn.softmax(jax.random.normal(jax.random.key(2), (9, 4)) * 2, axis=-1)
    f = jax.random.normal(jax.random.key(3), (9, 2))
    k, p = _dense_p(a)
    np.testing.assert_allclose(kar.smooth(a, f), p @ np.asarray(f), rtol=1e-5, atol=1e-6)
    sq = np.mean((np.asarray(f) - p @ np.asarray(f)) ** 2)
    np.testing.assert_allclose(kar.self_consistency(a, f, "squared"), sq, rtol=1e-5)
    fn = np.asarray(f)
    lap = sum(k[i, j] * np.sum((fn[i] - fn[j]) ** 2) for i in range(9) for j in range(9)) / (2 * k.sum() * 2)
    np.testing.assert_allclose(kar.self_consistency(a, f, "laplacian"), lap, rtol=1e-4)
    with pytest.raises(ValueError, match="unknown KAR residual"):
        kar.self_consistency(a, f, "cubic")


def test_kar_peak_smoother_forms_vanish_on_constant_signals():
    net = kar.AttentionNet(rank=5, width=8)
    rows = jnp.linspace(-1, 1, 6)[:, None]
    a_row = jax.jit(lambda x: net.apply(net.init(jax.random.key(0), x), x))(rows)
    np.testing.assert_allclose(jnp.sum(a_row, -1), 1.0, rtol=1e-6)     # rows on the simplex
    const = jnp.full((6, 6, 3), 0.4)
    assert abs(float(kar.kar_rowcol(const, a_row, a_row))) < 1e-10
    assert abs(float(kar.kar_rowcol(const, a_row, a_row, "laplacian"))) < 1e-10
    noisy = const + 0.1 * jax.random.normal(jax.random.key(1), const.shape)
    assert float(kar.kar_rowcol(noisy, a_row, a_row)) > 1e-4
