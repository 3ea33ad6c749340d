"""The Q-weighted noise estimate against the analytic score of a Gaussian target."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.maxentdp import diffusion_policy as dp, q_weighted

ALPHA = 0.5
MU = jnp.array([0.2, -0.1])
SIG = jnp.array([0.15, 0.25])


def quadratic_q(a):
    """Q(a) = −α Σ (a − μ)²/(2σ²): exp(Q/α) is N(μ, diag σ²)."""
    return -ALPHA * jnp.sum((a - MU) ** 2 / (2 * SIG ** 2), axis=-1)


def analytic_eps(x_t, ab):
    """E[ε | x_t] = −√(1−ᾱ) ∇ log p_t(x_t) for x₀ ~ N(μ, σ²): p_t = N(√ᾱ μ, ᾱσ² + 1 − ᾱ)."""
    score = -(x_t - jnp.sqrt(ab) * MU) / (ab * SIG ** 2 + 1 - ab)
    return -jnp.sqrt(1 - ab) * score


# one log-target object and one jitted estimator, so the three ᾱ cases share a compile
# (a fresh closure per case is a new static argument, i.e. a recompile)
_CLIP_TARGET = q_weighted.soft_q_log_target(quadratic_q, ALPHA, "clip")
_qne_jit = jax.jit(q_weighted.qne_target, static_argnums=(3, 4, 5))


@pytest.mark.parametrize("ab_value", [0.97, 0.6, 0.2])
def test_qne_target_equals_analytic_score_for_quadratic_q(ab_value):
    """bound "clip": truncated candidates in [−1, 1]² (the target has no mass near the box
    edge, so the truncation changes nothing); K = 20,000 candidates."""
    x_t = jnp.array([[0.3, -0.4], [-0.5, 0.2], [0.0, 0.0]])
    ab = jnp.full((3, 1), ab_value)
    est = _qne_jit(jax.random.key(0), x_t, ab, _CLIP_TARGET, 20_000, "clip")
    np.testing.assert_allclose(est, analytic_eps(x_t, ab), atol=0.03)


def test_qne_target_matches_analytic_for_gaussian_latent_target_tanh_bound():
    """bound "tanh" draws candidates in the latent box [−U_MAX, U_MAX]²; with a log-target
    that is Gaussian in the latent the estimate is again the analytic posterior-mean noise."""
    x_t = jnp.array([[0.6, -0.4], [0.1, 0.5]])
    ab = jnp.array([[0.8], [0.4]])
    log_target = lambda x0: quadratic_q(x0) / ALPHA
    est = _qne_jit(jax.random.key(1), x_t, ab, log_target, 20_000, "tanh")
    np.testing.assert_allclose(est, analytic_eps(x_t, ab), atol=0.03)


def test_qne_target_monte_carlo_spread_shrinks_like_one_over_sqrt_k():
    """The estimate is a posterior mean, not a sample: its Monte Carlo spread over keys
    shrinks like 1/√K."""
    x_t, ab = jnp.array([[0.3, -0.4]]), jnp.array([[0.5]])
    log_target = q_weighted.soft_q_log_target(quadratic_q, ALPHA, "clip")
    spread = {}
    for k in (100, 1600):
        ests = jax.jit(jax.vmap(
            lambda key: q_weighted.qne_target(key, x_t, ab, log_target, k, "clip")))(
            jax.random.split(jax.random.key(2), 64))
        spread[k] = float(jnp.std(ests[:, 0, 0]))
    assert 2.5 < spread[100] / spread[1600] < 6.5, spread


@pytest.mark.parametrize("bound", ["clip", "tanh"])
def test_candidates_stay_in_the_box_even_far_in_the_tail(bound):
    x_t = jnp.array([[3.0, -0.2], [0.0, 8.0]]) * dp.x0_limit(bound)
    ab = jnp.array([[0.99], [0.9]])
    e, x0 = q_weighted.candidates(jax.random.key(3), x_t, ab, 500, bound)
    assert bool(jnp.all(jnp.isfinite(e)))
    assert float(jnp.max(jnp.abs(x0))) <= dp.x0_limit(bound) * (1 + 1e-5)
    # and x₀ = x_t/√ᾱ + √((1−ᾱ)/ᾱ) e holds for every candidate
    np.testing.assert_allclose(x0, x_t / jnp.sqrt(ab) + jnp.sqrt((1 - ab) / ab) * e, atol=1e-5)


def test_tanh_log_target_adds_the_jacobian():
    x0 = jnp.array([[[0.3, -1.7]], [[2.5, 0.0]]])             # (K=2, B=1, A=2)
    q = lambda a: jnp.sum(a, axis=-1)
    lt = q_weighted.soft_q_log_target(q, 0.25, "tanh")(x0)
    a = jnp.tanh(x0)
    expected = jnp.sum(a, -1) / 0.25 + jnp.sum(jnp.log(1 - a ** 2), -1)
    np.testing.assert_allclose(lt, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(q_weighted.soft_q_log_target(q, 0.25, "clip")(x0),
                               jnp.sum(jnp.clip(x0, -1, 1), -1) / 0.25, rtol=1e-6)
