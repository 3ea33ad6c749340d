"""Adam and SGD: optax equality bit for bit, the paper's recursion in closed form,
convergence with exact gradients, and the errors for bad hyperparameters."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lib.adam_abc import problems, schedules
from lib.adam_abc.adam import adam
from lib.adam_abc.sgd import sgd


def _params():
    k1, k2 = jax.random.split(jax.random.key(0))
    return {"w": jax.random.normal(k1, (5, 3)), "b": jax.random.normal(k2, (4,))}


def _run(opt, steps=40):
    """`steps` updates on noisy gradients g = 3ξ + params (one jitted scan), final params."""
    def body(carry, key):
        params, state = carry
        grads = jax.tree.map(lambda p: 3.0 * jax.random.normal(key, p.shape) + p, params)
        updates, state = opt.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), None

    params = _params()
    keys = jax.random.split(jax.random.key(1), steps)
    return jax.jit(lambda p: jax.lax.scan(body, (p, opt.init(p)), keys)[0][0])(params)


def _updates(opt, grads, params):
    """All updates and states of `opt` for the gradient sequence `grads` (T, ...), jitted."""
    def body(state, g):
        update, state = opt.update(g, state)
        return state, (update, state.v)

    return jax.jit(lambda gs: jax.lax.scan(body, opt.init(params), gs))(grads)


def test_adam_with_bias_correction_equals_optax_adam_bit_for_bit():
    ours = _run(adam(1e-2, 0.9, 0.999, 1e-8, bias_correction=True))
    theirs = _run(optax.adam(1e-2, b1=0.9, b2=0.999, eps=1e-8))
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key])


def test_adam_step_size_schedule_equals_optax_schedule_bit_for_bit():
    lr = optax.exponential_decay(0.3, transition_steps=7, decay_rate=0.5)
    ours = _run(adam(lambda t: lr(t - 1), 0.0, 0.5, 1e-3, bias_correction=True))  # α_t = lr(t−1)
    theirs = _run(optax.adam(lr, b1=0.0, b2=0.5, eps=1e-3))
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key])


def test_sgd_equals_optax_sgd_bit_for_bit():
    ours, theirs = _run(sgd(0.05)), _run(optax.sgd(0.05))
    for key in ours:
        np.testing.assert_array_equal(ours[key], theirs[key])


def test_paper_form_matches_its_closed_form_for_a_constant_gradient():
    """g_t = g: m_t = (1 − β1^t) g, v_t = β2^t v0 + (1 − β2^t) g², no bias correction."""
    alpha, b1, b2, eps, v0 = 0.1, 0.9, 0.99, 1e-3, 0.5
    g = jnp.array([2.0, -0.5, 1e-3])
    state, (updates, vs) = _updates(adam(alpha, b1, b2, eps, v_init=v0), jnp.tile(g, (30, 1)),
                                    jnp.zeros(3))
    t = np.arange(1, 31)[:, None]
    g64 = np.asarray(g, np.float64)
    m = (1 - b1 ** t) * g64
    v = b2 ** t * v0 + (1 - b2 ** t) * g64 ** 2
    np.testing.assert_allclose(updates, -alpha * m / (np.sqrt(v) + eps), rtol=2e-6)
    np.testing.assert_allclose(vs, v, rtol=2e-6)
    assert int(state.count) == 30


def test_beta2_schedule_is_evaluated_at_the_update_index():
    """β2,t = 1 − 1/t (β2,1 = 0) makes v_t the running mean of g_1², ..., g_t²."""
    opt = adam(0.1, 0.0, schedules.one_minus_polynomial(1.0, 1.0), 1e-8)
    grads = jax.random.normal(jax.random.key(3), (50, 6))
    _, (_, vs) = _updates(opt, grads, jnp.zeros(6))
    g2 = np.asarray(grads, np.float64) ** 2
    running_mean = np.cumsum(g2, axis=0) / np.arange(1, 51)[:, None]
    np.testing.assert_allclose(vs, running_mean, rtol=1e-5)


def test_eps_inside_the_root_and_v_init():
    opt = adam(1.0, 0.0, 0.0, eps=0.0, eps_root=4.0, v_init=7.0)
    _, (updates, _) = _updates(opt, jnp.array([[3.0]]), jnp.zeros(1))
    np.testing.assert_allclose(updates[0], [-3.0 / np.sqrt(9.0 + 4.0)], rtol=1e-6)  # β2 = 0


def test_adam_converges_to_the_minimiser_of_a_quadratic_with_exact_gradients():
    problem = problems.quadratic(dim=5, condition=10.0, init_distance=3.0)
    opt = adam(schedules.polynomial(0.5, 0.6, 10.0), 0.9,
               schedules.one_minus_polynomial(1.0, 0.6, 10.0), 1e-8)

    def body(carry, _):
        theta, state = carry
        updates, state = opt.update(problem.grad(theta), state)
        theta = optax.apply_updates(theta, updates)
        return (theta, state), jnp.linalg.norm(theta - problem.minimiser)

    (_, _), dist = jax.lax.scan(body, (problem.theta0, opt.init(problem.theta0)), length=20000)
    dist = np.asarray(dist)
    assert dist[0] > 1.0
    assert dist[-1] < 2e-3, dist[-1]
    assert dist[-1] < 0.05 * dist[1999]


@pytest.mark.parametrize("kwargs,name", [
    (dict(b1=1.0), "b1"), (dict(b1=-0.1), "b1"), (dict(b1=1.5), "b1"),
    (dict(b2=1.0), "b2"), (dict(b2=-1e-3), "b2"),
    (dict(step_size=0.0), "step_size"), (dict(step_size=-1e-3), "step_size"),
    (dict(step_size=float("nan")), "step_size"), (dict(eps=-1.0), "eps"),
    (dict(v_init=-1.0), "v_init"),
])
def test_bad_hyperparameters_raise_value_error_naming_the_parameter(kwargs, name):
    args = dict(step_size=0.1, b1=0.9, b2=0.999, eps=1e-8) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} = .* must"):
        adam(**args)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="all 0"):
        adam(0.1, 0.9, 0.999, eps=0.0)
    with pytest.raises(ValueError, match="bias_correction needs a constant b2"):
        adam(0.1, 0.9, schedules.one_minus_polynomial(1.0, 1.0), bias_correction=True)
    with pytest.raises(ValueError, match="^step_size = 0.0 must"):
        sgd(0.0)
    with pytest.raises(ValueError, match="step_size scale = -1.0"):
        schedules.polynomial(-1.0, 0.6)
    with pytest.raises(ValueError, match="makes β2 negative"):
        schedules.one_minus_polynomial(2.0, 0.5)
    with pytest.raises(ValueError, match="beta2_c = 300 exceeds the horizon 256"):
        schedules.horizon(1.0, 256, 300)
    np.testing.assert_allclose(schedules.horizon(2.0, 400, 1.0), (0.1, 0.9975))
