"""Derivative filters: moment conditions for any θ, 4th-order convergence at init,
y-derivative = transposed x-derivative, and errors on bad input."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import stencils
from lib.multipdenet.filters import DerivativeFilters1D, DerivativeFilters2D


def _random_params(params, key):
    leaves, tree = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(key, len(leaves))
    return jax.tree_util.tree_unflatten(tree, [jax.random.normal(k, x.shape) for k, x in zip(keys, leaves)])


def _kernels_from_impulse(model, params, n=9):
    """Read the four applied kernels (∂x, ∂y, ∂xx, ∂yy at h=1) off the response to a unit impulse."""
    delta = jnp.zeros((n, n, 1)).at[n // 2, n // 2, 0].set(1.0)
    d = model.apply(params, delta)
    c = n // 2
    # cross-correlation: response[y, x] = K[c - y + 2, c - x + 2], so flip the 5×5 window
    return [np.asarray(f[c - 2 : c + 3, c - 2 : c + 3, 0])[::-1, ::-1] for f in d]


def test_sum_rule_filters_satisfy_moment_conditions_for_any_parameters():
    model = DerivativeFilters2D(h=1.0, mode="symmetric")
    params = _random_params(model.init(jax.random.key(0), jnp.zeros((9, 9, 1))), jax.random.key(1))
    assert params["params"]["first_order"].shape == (5,)
    assert params["params"]["second_order"].shape == (6,)
    kx, ky, kxx, kyy = _kernels_from_impulse(model, params)
    M = stencils.moment
    # ∂x: sum 0, M10 = 1, no ∂y / ∂xx / ∂yy / ∂xy parts
    for p, q, want in [(0, 0, 0), (1, 0, 1), (0, 1, 0), (2, 0, 0), (0, 2, 0), (1, 1, 0)]:
        assert M(kx, p, q) == pytest.approx(want, abs=1e-5)
    # ∂xx: sum 0, M20 = 2, M02 = 0, all odd moments 0
    for p, q, want in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (2, 0, 2), (0, 2, 0), (1, 1, 0), (3, 0, 0), (1, 2, 0)]:
        assert M(kxx, p, q) == pytest.approx(want, abs=1e-5)
    np.testing.assert_allclose(ky, kx.T, atol=1e-6)
    np.testing.assert_allclose(kyy, kxx.T, atol=1e-6)
    # the parameters do move the kernel away from the FD stencil (the check can fail)
    assert np.abs(kx - stencils.first_order_family("frozen").base).max() > 1e-2
    assert M(kx, 3, 0) != pytest.approx(0.0, abs=1e-3)


def test_p2c2net_layout_has_zero_sum_and_eight_parameters():
    model = DerivativeFilters2D(h=1.0, mode="symmetric", layout="p2c2net")
    params = model.init(jax.random.key(0), jnp.zeros((9, 9, 1)))
    assert params["params"]["first_order"].shape == (8,)
    assert params["params"]["second_order"].shape == (8,)
    kx0, _, kxx0, _ = _kernels_from_impulse(model, params)
    np.testing.assert_allclose(kx0[2], stencils.FIRST_ORDER_STENCIL, atol=1e-6)
    np.testing.assert_allclose(kxx0[2], stencils.SECOND_ORDER_STENCIL, atol=1e-6)
    kx, _, kxx, _ = _kernels_from_impulse(model, _random_params(params, jax.random.key(1)))
    assert kx.sum() == pytest.approx(0.0, abs=1e-5)
    assert kxx.sum() == pytest.approx(0.0, abs=1e-5)
    np.testing.assert_allclose(kx[:, [0, 1]], -kx[:, [4, 3]], atol=1e-6)  # odd in x off the centre column
    np.testing.assert_allclose(kx[:, 2], -kx[::-1, 2], atol=1e-6)  # the centre column is odd in y
    np.testing.assert_allclose(kxx, kxx[::-1, ::-1], atol=1e-6)


def test_fd4_taps_layout_keeps_the_fd4_support_and_moments_for_any_parameters():
    model = DerivativeFilters2D(h=1.0, mode="symmetric", layout="fd4_taps")
    params = _random_params(model.init(jax.random.key(0), jnp.zeros((9, 9, 1))), jax.random.key(3))
    assert params["params"]["first_order"].shape == (1,)
    assert params["params"]["second_order"].shape == (1,)
    kx, ky, kxx, kyy = _kernels_from_impulse(model, params)
    # only the centre row, and there only the FD4 taps (no centre tap for ∂x)
    for k in (kx, kxx):
        assert np.all(np.delete(k, 2, axis=0) == 0.0)
    assert kx[2, 2] == 0.0
    M = stencils.moment
    for p, q, want in [(0, 0, 0), (1, 0, 1), (2, 0, 0)]:
        assert M(kx, p, q) == pytest.approx(want, abs=1e-5)
    for p, q, want in [(0, 0, 0), (1, 0, 0), (2, 0, 2), (0, 2, 0), (3, 0, 0)]:
        assert M(kxx, p, q) == pytest.approx(want, abs=1e-5)
    np.testing.assert_allclose(ky, kx.T, atol=1e-6)
    np.testing.assert_allclose(kyy, kxx.T, atol=1e-6)
    # θ moves the next moment (k³ of ∂x, k⁴ of ∂xx) away from FD4's, which it zeroes
    assert M(kx, 3, 0) != pytest.approx(0.0, abs=1e-3)
    assert M(kxx, 4, 0) != pytest.approx(0.0, abs=1e-3)
    assert M(stencils.first_order_family("frozen").base, 3, 0) == pytest.approx(0.0, abs=1e-12)


def _errors_2d(n: int, mode: str) -> np.ndarray:
    """Max errors of (u_x, u_y, u_xx, u_yy) at init on an n×n grid over [0, 2π)², float64."""
    h = 2 * np.pi / n
    g = np.arange(n) * h
    x, y = np.meshgrid(g, g, indexing="xy")
    u = np.sin(x + 2 * y) + np.cos(2 * x - y)
    exact = [
        np.cos(x + 2 * y) - 2 * np.sin(2 * x - y),
        2 * np.cos(x + 2 * y) + np.sin(2 * x - y),
        -np.sin(x + 2 * y) - 4 * np.cos(2 * x - y),
        -4 * np.sin(x + 2 * y) - np.cos(2 * x - y),
    ]
    model = DerivativeFilters2D(h=h, mode=mode)
    field = jnp.asarray(u[..., None])
    d = model.apply(model.init(jax.random.key(0), field), field)
    return np.array([np.abs(np.asarray(f[..., 0]) - e).max() for f, e in zip(d, exact)])


@pytest.mark.parametrize("mode", ["symmetric", "free", "frozen"])
def test_filters_at_init_converge_at_fourth_order(mode):
    with jax.enable_x64(True):
        e16, e32 = _errors_2d(16, mode), _errors_2d(32, mode)
    orders = np.log2(e16 / e32)
    assert np.all(orders > 3.8) and np.all(orders < 4.2), orders


def test_1d_filters_at_init_converge_at_fourth_order():
    def errors(n):
        h = 2 * np.pi / n
        x = np.arange(n) * h
        u = jnp.asarray((np.sin(x) + np.cos(2 * x))[:, None])
        model = DerivativeFilters1D(h=h)
        d = model.apply(model.init(jax.random.key(0), u), u)
        ex = [np.cos(x) - 2 * np.sin(2 * x), -np.cos(x) + 8 * np.sin(2 * x)]
        return np.array([np.abs(np.asarray(f[:, 0]) - e).max() for f, e in zip(d, ex)])

    with jax.enable_x64(True):
        orders = np.log2(errors(16) / errors(32))
    assert np.all(orders > 3.8) and np.all(orders < 4.2), orders


def test_1d_symmetric_filters_keep_moments_for_any_parameters():
    model = DerivativeFilters1D(h=1.0)
    params = _random_params(model.init(jax.random.key(0), jnp.zeros((15, 1))), jax.random.key(2))
    delta = jnp.zeros((15, 1)).at[7, 0].set(1.0)
    d = model.apply(params, delta)
    k1 = np.asarray(d.x[5:10, 0])[::-1]
    k3 = np.asarray(d.xxx[4:11, 0])[::-1]
    for k, want in [(k1, {0: 0, 1: 1, 2: 0}), (k3, {0: 0, 1: 0, 2: 0, 3: 6, 4: 0})]:
        for p, w in want.items():
            assert stencils.moment(k, p) == pytest.approx(w, abs=1e-5)
    assert np.abs(k1 - stencils.FIRST_ORDER_STENCIL).max() > 1e-2


@pytest.mark.parametrize("mode", ["symmetric", "free"])
def test_y_derivative_is_x_derivative_of_transpose(mode):
    u = jax.random.normal(jax.random.key(0), (2, 12, 12, 3))
    model = DerivativeFilters2D(h=0.3, mode=mode)
    params = _random_params(model.init(jax.random.key(1), u), jax.random.key(2))
    d = model.apply(params, u)
    dt = model.apply(params, jnp.swapaxes(u, 1, 2))
    np.testing.assert_allclose(d.y, jnp.swapaxes(dt.x, 1, 2), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d.yy, jnp.swapaxes(dt.xx, 1, 2), rtol=1e-5, atol=1e-4)
    assert float(jnp.abs(d.y - d.x).max()) > 1e-1


def test_frozen_filters_have_no_parameters():
    model = DerivativeFilters2D(h=1.0, mode="frozen")
    assert jax.tree_util.tree_leaves(model.init(jax.random.key(0), jnp.zeros((8, 8, 1)))) == []


def test_bad_input_raises():
    with pytest.raises(ValueError, match="at least 5×5"):
        DerivativeFilters2D(h=1.0).init(jax.random.key(0), jnp.zeros((4, 8, 1)))
    with pytest.raises(ValueError, match="unknown filter mode 'learned'"):
        DerivativeFilters2D(h=1.0, mode="learned").init(jax.random.key(0), jnp.zeros((8, 8, 1)))
    with pytest.raises(ValueError, match="unknown symmetric filter layout"):
        DerivativeFilters2D(h=1.0, layout="pdenet").init(jax.random.key(0), jnp.zeros((8, 8, 1)))
    with pytest.raises(ValueError, match="at least 7 grid points"):
        DerivativeFilters1D(h=1.0).init(jax.random.key(0), jnp.zeros((6, 1)))
