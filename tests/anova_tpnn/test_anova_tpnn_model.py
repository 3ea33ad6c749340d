"""ANOVA-TPNN and baselines: sum of components = output, uniqueness of the decomposition."""
import functools
import itertools

import flax.linen
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import pytest

from lib.anova_tpnn import baselines
from lib.anova_tpnn.model import (ANOVATPNN, component_names, init_from_data,
                                  output_from_components, stack_components)
from lib.nn import mlp as nn_mlp

CFG = ml_collections.ConfigDict(dict(max_order=2, num_units=4, nam_hidden=(8, 4),
                                     nbm_hidden=(8,), nbm_bases=5, mlp_hidden=(8,)))


def _apply(model, params, *args, method=None):
    """model.apply under jit (one compile instead of op-by-op dispatch)."""
    return jax.jit(functools.partial(model.apply, method=method))(params, *args)


def _x(n=30, p=3, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, size=(n, p)).astype(np.float32)


def _tpnn(x, max_order=2, units=4, seed=0):
    model = ANOVATPNN(x.shape[1], max_order, units)
    params = jax.jit(functools.partial(init_from_data, model))(
        jax.random.key(seed), np.sort(x, axis=0))
    for o in range(1, max_order + 1):
        shape = params["params"][f"beta_{o}"].shape
        params["params"][f"beta_{o}"] = jax.random.normal(jax.random.key(10 + seed + o), shape)
    params["params"]["intercept"] = jnp.float32(0.7)
    return model, params


@pytest.mark.parametrize("name", ["tpnn", "nam", "nbm"])
def test_sum_of_components_equals_the_model_output(name):
    x = _x()
    model = baselines.build(name, 3, CFG)
    params = jax.jit(functools.partial(baselines.init_params, model))(
        jax.random.key(1), np.sort(x, axis=0))
    consts = _apply(model, params, x, method=model.constants)
    comps = _apply(model, params, x, consts, method=model.components)
    assert stack_components(comps).shape == (30, 3 + 3)
    total = comps[0] + jnp.sum(stack_components(comps), axis=1)
    np.testing.assert_allclose(_apply(model, params, x, consts), total, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(output_from_components(comps), total, rtol=1e-6, atol=1e-6)


def test_component_names_follow_the_stacked_columns_and_higher_orders_work():
    assert component_names(3, 2) == [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    x = _x(20, 4)
    model, params = _tpnn(x, max_order=3)
    consts = _apply(model, params, x, method=model.constants)
    comps = _apply(model, params, x, consts, method=model.components)
    assert stack_components(comps).shape == (20, 4 + 6 + 4)
    assert len(component_names(4, 3)) == 14


def _hooker_decomposition(f_grid: np.ndarray) -> dict:
    """Functional ANOVA of a function given on the full product grid (n, n, n) of a 3-D
    product measure with uniform weights on each axis (Hooker 2007): returns
    {S: array over the grid broadcastable to (n, n, n)} for S ⊆ {0, 1, 2}."""
    comps = {}
    for size in range(4):
        for s in itertools.combinations(range(3), size):
            rest = tuple(a for a in range(3) if a not in s)
            v = f_grid.mean(axis=rest, keepdims=True) if rest else f_grid.copy()
            for t in comps:                                     # subtract proper subsets
                if set(t) < set(s):
                    v = v - comps[t]
            comps[s] = v
    return comps


def test_components_are_the_unique_functional_anova_of_the_output_function():
    """The decomposition is a function of f alone: projecting the model's output under
    μ_n = ∏_j (empirical marginal of the training rows) returns the model's components, and
    the three-way remainder is zero (f has no order-3 part)."""
    n = 7
    x = _x(n, 3, seed=4)
    model, params = _tpnn(x)
    consts = _apply(model, params, x, method=model.constants)
    grid = np.array(list(itertools.product(range(n), repeat=3)))
    rows = np.stack([x[grid[:, a], a] for a in range(3)], axis=1)   # product grid, (n³, 3)
    comps = _apply(model, params, rows, consts, method=model.components)
    f = np.asarray(output_from_components(comps)).reshape(n, n, n)
    hooker = _hooker_decomposition(f.astype(np.float64))
    np.testing.assert_allclose(hooker[()].ravel(), 0.7, atol=1e-5)        # the intercept
    stacked = np.asarray(stack_components(comps)).reshape(n, n, n, -1)
    for col, s in enumerate(component_names(3, 2)):
        np.testing.assert_allclose(np.broadcast_to(hooker[s], (n, n, n)), stacked[..., col],
                                   atol=2e-5, err_msg=f"component {s}")
    np.testing.assert_allclose(hooker[(0, 1, 2)], 0.0, atol=2e-5)


def test_two_parameter_settings_with_the_same_function_give_the_same_components():
    """Setting A: units 0 and 1 of every component share (b, γ); setting B moves β mass
    between them and permutes the units. Different parameters, same f, same components."""
    x = _x(25, 3, seed=2)
    model, pa = _tpnn(x)
    pb = jax.tree.map(lambda a: a, pa)
    perm = np.array([1, 0, 3, 2])
    for o in (1, 2):
        for key in (f"b_{o}", f"log_gamma_{o}"):
            pa["params"][key] = pa["params"][key].at[..., 1].set(pa["params"][key][..., 0])
            pb["params"][key] = pa["params"][key][..., perm]
        beta = pa["params"][f"beta_{o}"]
        moved = beta.at[:, 0].add(0.8).at[:, 1].add(-0.8)
        pb["params"][f"beta_{o}"] = moved[:, perm]
    assert not np.allclose(pa["params"]["beta_1"], pb["params"]["beta_1"])
    ca = _apply(model, pa, x, method=model.constants)
    cb = _apply(model, pb, x, method=model.constants)
    comps_a = _apply(model, pa, x, ca, method=model.components)
    comps_b = _apply(model, pb, x, cb, method=model.components)
    np.testing.assert_allclose(_apply(model, pa, x, ca), _apply(model, pb, x, cb), atol=1e-5)
    for o in (1, 2):
        np.testing.assert_allclose(comps_a[o], comps_b[o], atol=1e-5)


def test_nam_components_are_not_unique_which_the_tpnn_constraint_prevents():
    """Negative control: shifting NAM's f_0 by +c and f_1 by −c keeps the function and
    changes the components; the same shift cannot be expressed by ANOVA-TPNN, whose
    projection (previous test) pins the components down."""
    x = _x()
    model = baselines.build("nam", 3, CFG)
    params = jax.jit(functools.partial(baselines.init_params, model))(jax.random.key(0), x)
    shifted = jax.tree.map(lambda a: a, params)
    last = f"c_1_{len(CFG.nam_hidden)}"
    shifted["params"][last] = params["params"][last].at[0].add(0.5).at[1].add(-0.5)
    ca = _apply(model, params, x, method=model.components)
    cb = _apply(model, shifted, x, method=model.components)
    np.testing.assert_allclose(_apply(model, params, x), _apply(model, shifted, x), atol=1e-5)
    assert np.max(np.abs(np.asarray(ca[1] - cb[1]))) > 0.4


def test_mlp_has_no_components_and_unknown_model_is_an_error():
    assert not baselines.HAS_COMPONENTS["mlp"]
    with pytest.raises(ValueError, match="unknown model 'gam'"):
        baselines.build("gam", 3, CFG)


class _PlainReLU(flax.linen.Module):
    """The MLP baseline as it was before it became lib.nn.mlp.MLP (reference only)."""

    hidden: tuple

    @flax.linen.compact
    def __call__(self, x, consts=None):
        h = x
        for width in self.hidden:
            h = flax.linen.relu(flax.linen.Dense(width)(h))
        return flax.linen.Dense(1)(h)[:, 0]


def test_mlp_baseline_is_lib_nn_mlp_with_the_old_params_init_and_outputs():
    cfg = ml_collections.ConfigDict(dict(CFG, mlp_hidden=(8, 5)))
    model = baselines.build("mlp", 3, cfg)
    assert isinstance(model, nn_mlp.MLP)
    x = jnp.asarray(np.sort(_x(), axis=0))
    params = jax.jit(functools.partial(baselines.init_params, model))(jax.random.key(3), x)
    ref = _PlainReLU((8, 5))
    old = jax.jit(ref.init)(jax.random.key(3), x[:2])                    # old checkpoints
    assert jax.tree.structure(params) == jax.tree.structure(old)
    jax.tree.map(np.testing.assert_array_equal, params, old)              # same init
    np.testing.assert_array_equal(_apply(model, params, x), _apply(ref, params, x))
    assert _apply(model, params, x).shape == (len(x),)
    assert _apply(model, params, x, method=model.constants) == {}
