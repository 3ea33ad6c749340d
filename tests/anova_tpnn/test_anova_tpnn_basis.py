"""The sum-to-zero basis: zero means to float tolerance, weighted measures, init, errors."""
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.anova_tpnn import basis
from lib.anova_tpnn.model import ANOVATPNN, init_from_data

def _apply(model, params, *args, method=None):
    """model.apply under jit (one compile instead of op-by-op dispatch)."""
    return jax.jit(functools.partial(model.apply, method=method))(params, *args)


def _data(n=40, p=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, size=(n, p)).astype(np.float32)


def _model_and_params(x, max_order=2, units=5, seed=0):
    model = ANOVATPNN(x.shape[1], max_order, units)
    params = jax.jit(functools.partial(init_from_data, model))(
        jax.random.key(seed), np.sort(x, axis=0))
    # random, non-trivial β (the init is small) so zero means are not zero by accident
    params = jax.tree.map(lambda a: a, params)
    for o in range(1, max_order + 1):
        beta = params["params"][f"beta_{o}"]
        params["params"][f"beta_{o}"] = jax.random.normal(jax.random.key(seed + o), beta.shape)
    return model, params


def _check_floor_inactive(consts):
    for m in consts.values():
        assert float(jnp.min(m)) > 10 * basis.MASS_FLOOR


def test_one_dimensional_factor_has_exact_zero_mean_and_the_paper_constant():
    x = _data(60, 1)[:, :, None]                       # (n, C=1, o=1)
    b = jnp.array([[[0.2, -0.5, 0.9]]])
    lg = jnp.log(jnp.array([[[0.1, 0.3, 1.0]]]))
    m = basis.sigmoid_mass(x, b, lg)
    g = basis.factors(x, b, lg, m)
    np.testing.assert_allclose(jnp.mean(g, axis=0), 0.0, atol=1e-6)
    # the paper's form 1 − σ + c·σ with c = −(1 − m)/m (eq. 6) is the same function
    s = jax.nn.sigmoid((x[..., None] - b) / jnp.exp(lg))
    c = -(1 - m) / m
    np.testing.assert_allclose(g, 1 - s + c * s, rtol=1e-5, atol=1e-5)


def test_main_effects_have_zero_mean_on_the_training_sample():
    x = _data()
    model, params = _model_and_params(x)
    consts = _apply(model, params, x, method=model.constants)
    _check_floor_inactive(consts)
    comps = _apply(model, params, x, consts, method=model.components)
    assert float(jnp.max(jnp.abs(comps[1]))) > 0.1                 # non-trivial components
    np.testing.assert_allclose(jnp.mean(comps[1], axis=0), 0.0, atol=1e-5)


@pytest.mark.parametrize("max_order", [2, 3])
def test_interactions_have_zero_marginal_means_for_every_value_of_the_other_coordinates(max_order):
    """∫ f_S(x_S) dμ_{n,j}(x_j) = 0 for every j ∈ S and every x_{S∖j} (eq. 3–4): evaluate f_S
    on the product grid of training values, average over the j axis."""
    n, p = 12, 4
    x = _data(n, p, seed=3)
    model, params = _model_and_params(x, max_order=max_order, units=4, seed=1)
    consts = _apply(model, params, x, method=model.constants)
    _check_floor_inactive(consts)
    components = jax.jit(functools.partial(model.apply, method=model.components))
    for order in range(2, max_order + 1):
        index = basis.component_index(p, order)
        for ci, feats in enumerate(index):
            grid = np.array(list(itertools.product(range(n), repeat=order)))  # (n^o, o)
            rows = np.zeros((len(grid), p), np.float32)
            for a, j in enumerate(feats):
                rows[:, j] = x[grid[:, a], j]
            vals = components(params, rows, consts)[order][:, ci]
            cube = np.asarray(vals).reshape((n,) * order)
            assert np.max(np.abs(cube)) > 1e-2
            for axis in range(order):
                np.testing.assert_allclose(cube.mean(axis=axis), 0.0, atol=1e-5)


def test_weighted_constants_give_zero_means_under_a_resample():
    x = _data(50, 3)
    w = (np.arange(50) % 3 != 0).astype(np.float32)           # a 2/3 subsample
    model, params = _model_and_params(x)
    consts = _apply(model, params, x, w, method=model.constants)
    comps = _apply(model, params, x, consts, method=model.components)
    kept = comps[1][w > 0]
    np.testing.assert_allclose(jnp.mean(kept, axis=0), 0.0, atol=1e-5)
    full = _apply(model, params, x, method=model.constants)      # other measure: not zero
    comps_full = _apply(model, params, x, full, method=model.components)
    assert float(jnp.max(jnp.abs(jnp.mean(comps_full[1][w > 0], axis=0)))) > 1e-3


def test_minibatch_constants_differ_from_frozen_ones_and_freezing_fixes_the_means():
    """Training uses each minibatch's constants; evaluation must use the frozen ones."""
    x = _data(80, 3)
    model, params = _model_and_params(x)
    batch_consts = _apply(model, params, x[:16], method=model.constants)
    comps = _apply(model, params, x, batch_consts, method=model.components)
    assert float(jnp.max(jnp.abs(jnp.mean(comps[1], axis=0)))) > 1e-3
    frozen = _apply(model, params, x, method=model.constants)
    comps = _apply(model, params, x, frozen, method=model.components)
    np.testing.assert_allclose(jnp.mean(comps[1], axis=0), 0.0, atol=1e-5)


def test_data_aware_init_puts_thresholds_inside_the_data_and_temperatures_positive():
    x = _data(100, 3, seed=5)
    xs = jnp.asarray(np.sort(x, axis=0))[:, :, None]          # (n, C=3, o=1)
    b, lg = basis.data_aware_init(jax.random.key(0), xs, 50)
    assert b.shape == lg.shape == (3, 1, 50)
    lo, hi = x.min(axis=0)[:, None, None], x.max(axis=0)[:, None, None]
    assert np.all((np.asarray(b) >= lo - 1e-6) & (np.asarray(b) <= hi + 1e-6))
    assert np.all(np.isfinite(lg)) and np.all(np.exp(lg) >= 1e-2 - 1e-7)
    # thresholds are quantiles at U(0,1) levels: roughly uniform over the data
    assert 0.3 < float(jnp.mean(b > 0)) < 0.7


def test_component_index_and_interaction_order_errors():
    np.testing.assert_array_equal(basis.component_index(3, 2), [[0, 1], [0, 2], [1, 2]])
    with pytest.raises(ValueError, match="order 4 exceeds the number of features 3"):
        basis.component_index(3, 4)
    with pytest.raises(ValueError, match="order 3 exceeds the number of features 2"):
        ANOVATPNN(2, 3, 4).init(jax.random.key(0), jnp.zeros((2, 2)),
                                method=ANOVATPNN.constants)
