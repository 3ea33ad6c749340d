"""Empirical NTK (jvp/vjp) against dense Jacobians and the analytic ReLU forms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.kar_peak import ntk
from lib.kar_peak.inrs import INR


def _small_inr(kind="relu_pe", out_dim=2):
    model = INR(kind=kind, width=8, depth=2, out_dim=out_dim, levels=2, features=4, sigma=2.0)
    x = jax.random.uniform(jax.random.key(1), (7, 2), minval=-1, maxval=1)
    params = jax.jit(model.init)(jax.random.key(0), x[:1])
    return model, params, x


@pytest.mark.parametrize("kind,out_dim,method", [("relu_pe", 2, "implicit"), ("siren", 1, "jacobian")])
def test_kar_peak_empirical_ntk_equals_dense_jacobian_product(kind, out_dim, method):
    model, params, x = _small_inr(kind, out_dim)
    x2 = x[:5] * 0.5
    dense = jax.jit(lambda p: ntk.dense_ntk(model.apply, p, x, x2))(params)
    emp = jax.jit(lambda p: ntk.empirical_ntk(model.apply, p, x, x2, chunk=2, method=method))(params)  # 5 = 2+2+1
    assert emp.shape == (7, 5)
    np.testing.assert_allclose(emp, dense, rtol=2e-4, atol=1e-5)


def test_kar_peak_one_hidden_layer_ntk_matches_analytic_finite_form():
    params = ntk.ntk_mlp_init(jax.random.key(3), 3, (64,))
    x = jax.random.normal(jax.random.key(4), (6, 3))
    emp = jax.jit(lambda p: ntk.empirical_ntk(ntk.ntk_mlp_apply, p, x, x, chunk=4))(params)
    np.testing.assert_allclose(emp, ntk.one_hidden_finite_ntk(params, x, x), rtol=1e-4, atol=1e-5)


def test_kar_peak_wide_network_ntk_approaches_infinite_width_form():
    x = jax.random.normal(jax.random.key(5), (5, 3))
    wide = ntk.ntk_mlp_init(jax.random.key(6), 3, (200_000,))
    finite = ntk.one_hidden_finite_ntk(wide, x, x)
    inf1 = ntk.relu_ntk_infinite(x, x, 1)
    np.testing.assert_allclose(finite, inf1, rtol=0.03, atol=0.03 * float(jnp.max(inf1)))
    two = ntk.ntk_mlp_init(jax.random.key(7), 3, (1024, 1024))
    emp2 = jax.jit(lambda p: ntk.empirical_ntk(ntk.ntk_mlp_apply, p, x, x, method="jacobian"))(two)
    inf2 = ntk.relu_ntk_infinite(x, x, 2)
    np.testing.assert_allclose(emp2, inf2, rtol=0.1, atol=0.1 * float(jnp.max(inf2)))
    # the two depths differ by more than the tolerance, so the check can tell them apart
    assert float(jnp.max(jnp.abs(inf1 - inf2))) > 0.2 * float(jnp.max(inf2))


def test_kar_peak_ntk_is_differentiable_and_checks_inputs():
    model, params, x = _small_inr("rff", 1)
    g = jax.jit(jax.grad(lambda p: jnp.sum(ntk.empirical_ntk(model.apply, p, x, x, chunk=3))))(params)
    assert all(bool(jnp.all(jnp.isfinite(a))) for a in jax.tree.leaves(g))
    with pytest.raises(ValueError, match="equal d"):
        ntk.empirical_ntk(model.apply, params, x, x[:, :1])
    with pytest.raises(ValueError, match="chunk"):
        ntk.empirical_ntk(model.apply, params, x, x, chunk=0)
    with pytest.raises(ValueError, match="unknown NTK method"):
        ntk.empirical_ntk(model.apply, params, x, x, method="neural_tangents")
