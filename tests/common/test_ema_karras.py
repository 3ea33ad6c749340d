"""lib.common.optim's parameter EMA: the "karras" decay against its closed form, the weights
it gives every step's parameters, a constant parameter's EMA, and "exp" as the inline
decay·ema + (1 − decay)·params it replaces, bit for bit."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import optim


def _closed_beta(t, gamma):
    return (1.0 - 1.0 / t) ** (gamma + 1.0)


@pytest.mark.parametrize("gamma", [7.0, 6.94, 1.0])
def test_karras_decay_matches_its_closed_form(gamma):
    steps = np.array([1, 2, 3, 10, 1000, 200_000])
    weight = np.asarray(optim.karras_ema_weight(steps, gamma), np.float64)
    closed = 1.0 - _closed_beta(steps.astype(np.float64), gamma)
    # relative precision of the small weights late in a run (4e-5 at t = 2e5), which
    # 1 - (1 - 1/t)**(γ+1) evaluated in float32 would miss by ~1e-3
    np.testing.assert_allclose(weight, closed, rtol=2e-6)
    beta = np.asarray(optim.ema_decay_at(steps, "karras", gamma=gamma), np.float64)
    np.testing.assert_allclose(beta, _closed_beta(steps.astype(np.float64), gamma), atol=1e-7)
    assert beta[0] == 0.0                      # the first update replaces the average
    assert optim.ema_decay_at(5, "exp", decay=0.995) == 0.995


def test_karras_ema_weights_every_step_by_the_power_function():
    """After t updates θ_i carries (i^(γ+1) − (i−1)^(γ+1)) / t^(γ+1); the initial EMA none."""
    gamma, t = 7.0, 50
    thetas = np.random.default_rng(0).normal(size=(t + 1, 3)).astype(np.float32)
    ema = jnp.asarray(thetas[0] + 100.0)       # whatever it starts at is forgotten at step 1
    for i in range(1, t + 1):
        ema = optim.ema_update(ema, jnp.asarray(thetas[i]), jnp.int32(i), "karras", gamma=gamma)
    i = np.arange(1, t + 1, dtype=np.float64)
    w = (i ** (gamma + 1) - (i - 1) ** (gamma + 1)) / float(t) ** (gamma + 1)
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ema), w @ thetas[1:].astype(np.float64), atol=2e-6)
    # γ = 1 and θ_i = i: the average is Σ i(2i − 1) / t² = (t + 1)(4t − 1) / (6t)
    ema = jnp.float32(0.0)
    for i in range(1, t + 1):
        ema = optim.ema_update(ema, jnp.float32(i), i, "karras", gamma=1.0)
    np.testing.assert_allclose(float(ema), (t + 1) * (4 * t - 1) / (6 * t), rtol=1e-6)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])
def test_karras_ema_of_a_constant_parameter_stays_equal_to_it(dtype):
    params = {"w": jnp.asarray([0.1, -3.7, 1e4], dtype), "b": jnp.asarray([1 / 3], dtype)}
    ema = params
    for step in (1, 2, 7, 1000, 123_457):
        ema = optim.ema_update(ema, params, jnp.int32(step), "karras", gamma=7.0)
    for k in params:
        assert ema[k].dtype == params[k].dtype
        np.testing.assert_array_equal(np.asarray(ema[k], np.float32),
                                      np.asarray(params[k], np.float32))


def test_exp_is_the_former_inline_update_bit_for_bit():
    k1, k2 = jax.random.split(jax.random.key(3))
    ema = {"a": jax.random.normal(k1, (5, 4)), "b": (jax.random.normal(k2, (7,)),)}
    for decay in (0.0, 0.9, 0.995, 0.9999):
        params = jax.tree.map(lambda x: x * 1.7 + 0.3, ema)
        former = lambda e, p, s: jax.tree.map(lambda a, b: decay * a + (1 - decay) * b, e, p)
        now = lambda e, p, s: optim.ema_update(e, p, s, "exp", decay=decay)
        for step in (1, 1000):
            for wrap in (lambda f: f, jax.jit):      # eagerly and inside a jitted step
                got = wrap(now)(ema, params, jnp.int32(step))
                ref = wrap(former)(ema, params, jnp.int32(step))
                for x, y in zip(jax.tree.leaves(got), jax.tree.leaves(ref)):
                    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    with pytest.raises(ValueError, match="ema kind 'power'"):
        optim.ema_update(ema, ema, 1, "power")
