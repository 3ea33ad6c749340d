"""The cheaper Physics Block paths equal the reference ones: shifted-window stencils against the
convolution (every filter mode and derivative, periodic padding), the fused pressure
projection against the three spectral steps and against closed forms."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import filters, physics, stencils
from lib.multipdenet.filters import DerivativeFilters1D, DerivativeFilters2D


def _random_params(params, key):
    leaves, tree = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(key, len(leaves))
    return jax.tree_util.tree_unflatten(tree, [jax.random.normal(k, x.shape) for k, x in zip(keys, leaves)])


def _assert_same(got, want):
    scale = float(jnp.abs(want).max())
    assert scale > 1.0  # a nontrivial response, so the tolerance below is relative to it
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=0, atol=2e-6 * scale)


def test_shifted_sums_equal_convolution_for_random_kernels():
    # non-square grid and a leading batch axis: a swapped axis or a wrong shift sign shows
    u = jax.random.normal(jax.random.key(0), (3, 11, 8, 2))
    kernels = jax.random.normal(jax.random.key(1), (5, 5, 3))
    want = jax.jit(filters.apply_stencils_2d)(u, kernels)
    got = jax.jit(filters.shifted_stencils_2d)(u, kernels)
    for n in range(3):
        _assert_same(got[n], want[..., n])
    v = jax.random.normal(jax.random.key(2), (3, 13, 2))
    k1 = jax.random.normal(jax.random.key(3), (7, 2))
    want1 = jax.jit(filters.apply_stencils_1d)(v, k1)
    for n, g in enumerate(jax.jit(filters.shifted_stencils_1d)(v, k1)):
        _assert_same(g, want1[..., n])


@pytest.mark.parametrize("mode, layout", [("symmetric", "sum_rules"), ("symmetric", "p2c2net"),
                                          ("symmetric", "fd4_taps"), ("free", "sum_rules"),
                                          ("frozen", "sum_rules")])
def test_2d_filters_shifted_equal_conv_for_every_mode(mode, layout):
    u = jax.random.normal(jax.random.key(0), (2, 12, 9, 2))
    conv = DerivativeFilters2D(h=0.5, mode=mode, layout=layout, impl="conv")
    shifted = DerivativeFilters2D(h=0.5, mode=mode, layout=layout, impl="shifted")
    params = conv.init(jax.random.key(0), u)
    if mode != "frozen":  # learnable filters away from their FD initialisation
        params = _random_params(params, jax.random.key(1))
    want, got = jax.jit(conv.apply)(params, u), jax.jit(shifted.apply)(params, u)
    for name in ("x", "y", "xx", "yy"):
        _assert_same(getattr(got, name), getattr(want, name))


@pytest.mark.parametrize("mode", ["symmetric", "free", "frozen"])
def test_1d_filters_shifted_equal_conv_for_every_mode(mode):
    u = jax.random.normal(jax.random.key(0), (3, 15, 1))
    conv = DerivativeFilters1D(h=0.5, mode=mode, impl="conv")
    shifted = DerivativeFilters1D(h=0.5, mode=mode, impl="shifted")
    params = conv.init(jax.random.key(0), u)
    if mode != "frozen":
        params = _random_params(params, jax.random.key(1))
    want, got = jax.jit(conv.apply)(params, u), jax.jit(shifted.apply)(params, u)
    for name in ("x", "xxx"):
        _assert_same(getattr(got, name), getattr(want, name))


def test_skipped_taps_are_zero_for_every_parameter_value():
    # the shifted path skips taps outside `support`; they must be zero for any θ
    for family in (stencils.first_order_family("symmetric"), stencils.second_order_family("symmetric"),
                   stencils.first_order_family("symmetric", "p2c2net"),
                   stencils.first_order_family("symmetric", "fd4_taps"),
                   stencils.second_order_family("symmetric", "fd4_taps"),
                   stencils.third_order_family_1d("symmetric")):
        theta = np.random.default_rng(0).normal(size=family.basis.shape[0])
        kernel = family.base + np.tensordot(theta, family.basis, axes=1)
        mask = filters.support(family)
        assert np.all(kernel[~mask] == 0.0)
        assert np.all(kernel[mask] != 0.0)  # and the kept ones are used
    assert filters.support(stencils.first_order_family("frozen")).sum() == 4  # the FD4 row, no centre
    # the fd4_taps layout reads exactly the frozen stencil's taps
    for order in (stencils.first_order_family, stencils.second_order_family):
        np.testing.assert_array_equal(filters.support(order("symmetric", "fd4_taps")),
                                      filters.support(order("frozen")))


def test_unknown_stencil_impl_and_bad_tap_mask_raise():
    with pytest.raises(ValueError, match="unknown stencil implementation 'fft'"):
        DerivativeFilters2D(h=1.0, impl="fft").init(jax.random.key(0), jnp.zeros((8, 8, 1)))
    with pytest.raises(ValueError, match=r"tap mask of shape \(5, 5\) does not match kernels \(5, 5, 2\)"):
        filters.shifted_stencils_2d(jnp.zeros((8, 8, 1)), jnp.zeros((5, 5, 2)), np.ones((5, 5), bool))


def _grid(n, length=2 * np.pi):
    h = length / n
    g = np.arange(n) * h
    x, y = np.meshgrid(g, g, indexing="xy")
    return x, y, h


def test_leray_projection_equals_composed_steps_and_closed_forms():
    n = 16
    x, y, h = _grid(n)
    g = jax.random.normal(jax.random.key(0), (2, n, n, 2))
    _assert_same(physics.leray_projection(g, h), physics.composed_projection(g, h))
    # the projection leaves no divergence and is idempotent
    p = physics.leray_projection(g, h)
    assert float(jnp.abs(physics.spectral_divergence(p, h)).max()) < 1e-4
    np.testing.assert_allclose(physics.leray_projection(p, h), p, atol=1e-5)
    # a gradient field projects to zero; a divergence-free one (a curl) is unchanged
    grad = np.stack([np.cos(x) * np.cos(2 * y), -2 * np.sin(x) * np.sin(2 * y)], -1)
    curl = np.stack([2 * np.sin(x) * np.cos(2 * y), -np.cos(x) * np.sin(2 * y)], -1)
    assert float(jnp.abs(physics.leray_projection(jnp.asarray(grad, jnp.float32), h)).max()) < 1e-5
    np.testing.assert_allclose(physics.leray_projection(jnp.asarray(curl, jnp.float32), h), curl, atol=1e-5)


def test_navier_stokes_rhs_projection_choice():
    n = 16
    _, _, h = _grid(n)
    u = jax.random.normal(jax.random.key(0), (n, n, 2))
    d = DerivativeFilters2D(h=h, mode="frozen").apply({}, u)
    fused = physics.navier_stokes_rhs(u, d, h)
    _assert_same(fused, physics.navier_stokes_rhs(u, d, h, projection="composed"))
    with pytest.raises(ValueError, match="unknown pressure projection 'poisson'"):
        physics.navier_stokes_rhs(u, d, h, projection="poisson")


@pytest.mark.parametrize("impl", filters.STENCIL_IMPLS)
@pytest.mark.parametrize("mode, layout", [("symmetric", "sum_rules"), ("symmetric", "p2c2net"),
                                          ("symmetric", "fd4_taps"), ("free", "sum_rules"),
                                          ("frozen", "sum_rules")])
def test_fused_laplacian_equals_xx_plus_yy_with_the_same_parameters(mode, layout, impl):
    u = jax.random.normal(jax.random.key(0), (2, 12, 9, 2))
    plain = DerivativeFilters2D(h=0.5, mode=mode, layout=layout, impl=impl)
    fused = DerivativeFilters2D(h=0.5, mode=mode, layout=layout, impl=impl, laplacian=True)
    params = plain.init(jax.random.key(0), u)
    assert jax.tree_util.tree_structure(fused.init(jax.random.key(0), u)) == jax.tree_util.tree_structure(params)
    if mode != "frozen":
        params = _random_params(params, jax.random.key(1))
    want, got = jax.jit(plain.apply)(params, u), jax.jit(fused.apply)(params, u)
    assert isinstance(got, filters.GradLap2D)
    _assert_same(got.x, want.x)
    _assert_same(got.y, want.y)
    _assert_same(got.lap, want.xx + want.yy)
    _assert_same(want.lap, want.xx + want.yy)
