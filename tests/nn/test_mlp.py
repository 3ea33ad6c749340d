"""lib/nn/mlp.py: parameter count matches Flax's, zero-scaled output starts constant, budget width."""
import jax
import jax.numpy as jnp
import pytest

from lib.nn.mlp import MLP, num_params, width_for_budget


def test_mlp_count_shape_and_zero_output_init():
    mlp = MLP(widths=(7, 5), out=3, activation="tanh")
    x = jax.random.normal(jax.random.key(0), (4, 6))
    params = mlp.init(jax.random.key(1), x)
    assert mlp.apply(params, x).shape == (4, 3)
    assert sum(a.size for a in jax.tree.leaves(params)) == num_params(6, (7, 5), 3) == 107   # 6·7+7 + 7·5+5 + 5·3+3
    flat = MLP(widths=(7,), out=2, out_scale=0.0)
    p0 = flat.init(jax.random.key(2), x)
    y = flat.apply(p0, x)
    assert jnp.allclose(y, y[:1]) and jnp.allclose(y, 0.0)


def test_width_for_budget_and_errors():
    w = width_for_budget(num_params(10, (33, 33), 4), 10, 4, depth=2)
    assert w == 33
    with pytest.raises(ValueError, match="depth"):
        width_for_budget(100, 3, 1, depth=0)
    with pytest.raises(ValueError, match="activation"):
        MLP(widths=(3,), out=1, activation="nope").init(jax.random.key(0), jnp.ones((1, 2)))


def test_trunk_without_output_layer_and_mish_with_the_shared_parameter_layout():
    import chex
    x = jax.random.normal(jax.random.key(0), (5, 4))
    trunk = MLP(widths=(8, 6), out=None, activation="mish")
    params = trunk.init(jax.random.key(1), x)
    h = trunk.apply(params, x)
    chex.assert_shape(h, (5, 6))
    chex.assert_tree_all_finite(h)
    kernel, bias = params["params"]["Dense_1"]["kernel"], params["params"]["Dense_1"]["bias"]
    h0 = MLP(widths=(8,), out=None, activation="mish").apply(
        {"params": {"Dense_0": params["params"]["Dense_0"]}}, x)
    pre = h0 @ kernel + bias
    chex.assert_trees_all_close(h, pre * jnp.tanh(jax.nn.softplus(pre)), rtol=1e-6)
    # MaxEntDP's and latent ATE's networks are this class: same tree as a plain Dense stack
    scalar = MLP(widths=(8,), out=1)
    chex.assert_trees_all_equal_structs(
        scalar.init(jax.random.key(2), x),
        {"params": {"Dense_0": {"bias": 0, "kernel": 0}, "Dense_1": {"bias": 0, "kernel": 0}}})
