"""The objectives: exact gradients, the smoothness constant, minimisers and f*, non-convexity,
unbounded gradients."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.adam_abc import problems

BUILD = {"quadratic": lambda: problems.quadratic(5, 10.0),
         "nonconvex": lambda: problems.nonconvex(5, 10),
         "least_squares": lambda: problems.least_squares(40, 5),
         "logistic": lambda: problems.logistic(80, 5)}


@pytest.fixture(scope="module")
def all_problems():
    return {name: build() for name, build in BUILD.items()}


def test_gradients_equal_autodiff_and_are_lipschitz_with_the_stated_constant(all_problems):
    for name, p in all_problems.items():
        x = 2.0 * jax.random.normal(jax.random.key(0), (64, p.dim))
        y = x + 0.5 * jax.random.normal(jax.random.key(1), (64, p.dim))
        grad = jax.jit(jax.vmap(p.grad))
        np.testing.assert_allclose(grad(x), jax.jit(jax.vmap(jax.grad(p.loss)))(x),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
        ratio = jnp.linalg.norm(grad(x) - grad(y), axis=1) / jnp.linalg.norm(x - y, axis=1)
        assert float(ratio.max()) <= p.smoothness * (1 + 1e-4), name
        # the constant is attained (quadratic, least squares) or within a factor 3 (others)
        assert float(ratio.max()) >= p.smoothness / 3, name


def test_minimisers_and_optimal_values(all_problems):
    for name in ("quadratic", "least_squares", "logistic"):
        p = all_problems[name]
        assert float(jnp.linalg.norm(p.grad(p.minimiser))) < 1e-5, name
        assert float(p.loss(p.minimiser)) == pytest.approx(p.f_star, rel=1e-5, abs=1e-6)
        assert float(p.loss(p.theta0)) > p.f_star + 0.1
        np.testing.assert_allclose(float(jnp.linalg.norm(p.theta0 - p.minimiser)), 3.0, rtol=1e-6)
    assert np.isnan(all_problems["nonconvex"].f_star)
    assert all_problems["nonconvex"].f_lower == 0.0


def test_the_nonconvex_objective_has_negative_curvature(all_problems):
    p = all_problems["nonconvex"]
    thetas = 2.0 * jax.random.normal(jax.random.key(2), (128, p.dim))
    eig_min = jax.jit(jax.vmap(lambda t: jnp.linalg.eigvalsh(jax.hessian(p.loss)(t))[0]))(thetas)
    assert float(eig_min.min()) < -0.05


def test_gradients_are_unbounded(all_problems):
    """‖∇f(s u)‖ grows linearly in s for the quadratic and regression problems: no bound on
    the gradient holds on R^d (the logistic loss is the one problem with bounded gradients)."""
    for name in ("quadratic", "nonconvex", "least_squares"):
        p = all_problems[name]
        u = jnp.ones(p.dim) / jnp.sqrt(p.dim)
        norms = [float(jnp.linalg.norm(p.grad(s * u))) for s in (1e2, 1e4)]
        assert norms[1] > 50 * norms[0], name


def test_finite_sum_minibatch_gradient_of_all_rows_is_the_full_gradient(all_problems):
    for name in ("least_squares", "logistic"):
        p = all_problems[name]
        theta = p.theta0 + 0.3
        full = p.finite_sum.batch_grad(theta, jnp.arange(p.finite_sum.n))
        np.testing.assert_allclose(full, p.grad(theta), rtol=1e-5, atol=1e-6)


def test_bad_problem_sizes():
    with pytest.raises(ValueError, match="condition >= 1"):
        problems.quadratic(3, 0.5)
