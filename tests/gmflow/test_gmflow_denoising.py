"""u ↔ x₀ conversions, Eq. 9 transitions and the Eq. 10 conversion against closed forms."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.gmflow import denoising, mixture
from tests.gmflow.gmflow_analytic import data_gm


def test_u_x0_round_trip_and_closed_form():
    t = np.array([0.1, 0.4, 0.7, 1.0], np.float32)

    @jax.jit
    def round_trip():
        gm = mixture.make_gm(jax.random.normal(jax.random.key(0), (4, 3, 1, 2)),
                             jax.random.normal(jax.random.key(1), (4, 3, 1)),
                             jnp.full((4,), -0.2))
        x_t = jax.random.normal(jax.random.key(2), (4, 1, 2))
        x0 = denoising.u_to_x0(gm, x_t, t)
        return gm, x_t, x0, denoising.x0_to_u(x0, x_t, t)

    gm, x_t, x0, back = jax.tree.map(np.asarray, round_trip())
    np.testing.assert_allclose(x0.means, x_t[:, None] - t[:, None, None, None] * gm.means, rtol=1e-6)
    np.testing.assert_allclose(x0.logstd, gm.logstd + np.log(t), rtol=1e-6)
    for a, b in zip(back, gm):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_data_posterior_matches_bayes_on_a_grid():
    """q(x₀ | x_t) ∝ p(x₀) N(x_t; α x₀, σ²) for 1-D GM data, checked by quadrature."""
    data = mixture.GM(jnp.array([[[-1.0]], [[0.5]], [[2.0]]]), jnp.log(jnp.array([[0.5], [0.2], [0.3]])),
                      jnp.asarray(np.log(0.3), jnp.float32))
    x_t, t = jnp.array([[[0.7]]]), 0.6
    grid = np.linspace(-6, 6, 24001)

    @jax.jit
    def densities():
        density = lambda gm: jnp.exp(jax.vmap(lambda v: mixture.log_prob(
            gm, v[None, None, None]))(jnp.asarray(grid, jnp.float32)))[:, 0]
        return (density(jax.tree.map(lambda a: a[None], data)),
                density(denoising.data_posterior(data, x_t, t)))

    prior, dens = map(np.asarray, densities())
    like = np.exp(-(0.7 - 0.4 * grid) ** 2 / (2 * 0.36))
    post = prior * like / np.trapezoid(prior * like, grid)
    np.testing.assert_allclose(dens, post, atol=2e-4)


def test_eq10_conversion_of_the_exact_posterior_is_exact():
    """For GM data, converting q(x₀|x_t) to (x_τ, τ) by Eq. 10 gives q(x₀|x_τ) exactly."""
    data = data_gm()
    x_t = jax.random.normal(jax.random.key(0), (6, 1, 2))
    x_tau = x_t * 0.7 + 0.3 * jax.random.normal(jax.random.key(1), (6, 1, 2))
    t, tau = 0.8, 0.35
    conv, direct = jax.jit(lambda x_t, x_tau: (
        denoising.convert_x0_gm(denoising.data_posterior(data, x_t, t), x_t, t, x_tau, tau),
        denoising.data_posterior(data, x_tau, tau)))(x_t, x_tau)
    for a, b in zip(conv, direct):
        np.testing.assert_allclose(a, b, atol=2e-5)


def test_eq9_transition_is_the_marginal_of_the_exact_bridge():
    """With exact x₀ GM, Eq. 9's mean/variance equal the Monte Carlo x_{t'} | x_t moments."""
    data = data_gm()
    t, t_next = 0.7, 0.3
    x_t = jnp.array([[[0.4, -0.9]]])
    # exact bridge x_{t'} | x_t, x₀ for the linear schedule, by Gaussian conditioning
    a, s, a2, s2 = 1 - t, t, 1 - t_next, t_next
    cov12 = (a / a2) * s2 ** 2        # Cov(x_{t'}, x_t | x₀): x_t = (α_t/α') x_{t'} + noise
    var = s2 ** 2 - cov12 ** 2 / s ** 2

    @jax.jit
    def bridge_and_moments(x_t):
        post = denoising.data_posterior(data, x_t, t)
        gm = denoising.transition_gm(post, x_t, t, t_next)
        many = jax.tree.map(lambda a: jnp.repeat(a, 200000, axis=0), post)
        x0 = mixture.sample(many, jax.random.key(0))
        mean = a2 * x0 + cov12 / s ** 2 * (x_t - a * x0)
        xs = mean + np.sqrt(var) * jax.random.normal(jax.random.key(1), mean.shape)
        return xs, mixture.moment_match(gm)

    xs, (m, v) = bridge_and_moments(x_t)
    np.testing.assert_allclose(np.asarray(xs).mean(0), m[0], atol=5e-3)
    np.testing.assert_allclose(np.asarray(xs).var(0).mean(), v[0], rtol=1e-2)


def test_transition_to_zero_is_the_x0_gm():
    gm = mixture.make_gm(jnp.ones((2, 3, 1, 2)), jnp.zeros((2, 3, 1)), jnp.full((2,), -1.0))
    x_t = jnp.zeros((2, 1, 2))
    out = denoising.transition_gm(gm, x_t, 0.5, 0.0)
    for a, b in zip(out, gm):
        np.testing.assert_allclose(a, b, atol=1e-6)
    c1, c2, c3 = denoising.transition_coefficients(0.5, 0.0)
    assert (float(c1), float(c2), float(c3)) == (0.0, 1.0, 0.0)
