"""The noise-level integral log π and the DDPM sampler against a known 1-D Gaussian mixture."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.maxentdp import diffusion_policy as dp, logprob
from tests.maxentdp import mixture_maxentdp as mix

XS = jnp.linspace(-1.3, 1.3, 9)[:, None]
_latent_log_prob = jax.jit(logprob.latent_log_prob, static_argnums=(0, 4, 5))


def test_integral_with_exact_denoiser_converges_to_true_log_density():
    """With the posterior-mean denoiser the estimate is the I-MMSE identity; the error is
    quadrature + Monte Carlo, and shrinks with the number of levels."""
    true = mix.log_density(XS[:, 0])
    err = {}
    for levels in (10, 60):
        lp = _latent_log_prob(mix.exact_eps, XS, jax.random.key(0), dp.schedule(levels), 256)
        err[levels] = float(jnp.max(jnp.abs(lp - true)))
    assert err[60] < 0.12, err
    assert err[60] < err[10], err


def test_integral_is_exact_for_a_standard_normal():
    """For p = N(0, 1) the ᾱ-form integrand is the constant 1 − x², so every Riemann sum
    over ᾱ is exact up to Monte Carlo noise and the ends of the grid."""
    eps_fn = lambda x_t, l: jnp.sqrt(jax.nn.sigmoid(-l))[..., None] * x_t   # √(1−ᾱ) x_t
    lp = _latent_log_prob(eps_fn, XS, jax.random.key(1), dp.schedule(20), 8192)
    true = jax.scipy.stats.norm.logpdf(XS[:, 0])
    np.testing.assert_allclose(lp, true, atol=0.03)


def test_trained_policy_log_prob_matches_mixture_density():
    """Train a small ε-network on the mixture (state input constant, 1,500 Adam steps);
    then the estimate at T = 20 with x̂₀ clipped to the "tanh" latent box tracks the true
    log-density."""
    net = dp.EpsNet(1, fourier_dim=16, time_hidden=(32,), hidden=(64, 64))
    obs = jnp.zeros((256, 1))
    params = net.init(jax.random.key(0), obs, jnp.zeros((256, 1)), jnp.zeros((256,)))
    opt = optax.adam(3e-3)
    opt_state = opt.init(params)

    def step(carry, key):
        params, opt_state = carry
        k1, k2, k3 = jax.random.split(key, 3)
        x0 = mix.sample(k1, 256)
        t = jax.random.uniform(k2, (256, 1), minval=dp.T_MIN, maxval=dp.T_MAX)
        ab = dp.alpha_bar(t)
        eps = jax.random.normal(k3, x0.shape)
        x_t = jnp.sqrt(ab) * x0 + jnp.sqrt(1 - ab) * eps
        g = jax.grad(dp.denoising_loss, argnums=1)(net, params, obs, x_t, dp.log_snr(ab[:, 0]),
                                                   eps)
        upd, opt_state = opt.update(g, opt_state)
        return (optax.apply_updates(params, upd), opt_state), None

    train = jax.jit(lambda c, keys: jax.lax.scan(step, c, keys)[0])
    params, _ = train((params, opt_state), jax.random.split(jax.random.key(1), 1500))
    obs_n = jnp.zeros((128, XS.shape[0], 1))
    lp = jax.jit(lambda p: logprob.latent_log_prob(
        lambda x, l: net.apply(p, obs_n, x, l), XS, jax.random.key(2), dp.schedule(20),
        num_draws=128, clip_x0=dp.U_MAX))(params)
    true = mix.log_density(XS[:, 0])
    assert float(jnp.ptp(true)) > 1.5
    err = jnp.abs(lp - true)
    assert float(jnp.mean(err)) < 0.35 and float(jnp.max(err)) < 0.9, np.c_[lp, true]
    assert np.corrcoef(lp, true)[0, 1] > 0.9, np.c_[lp, true]


def test_ddpm_sampler_with_exact_denoiser_reproduces_the_mixture():
    x = jax.jit(lambda k: dp.ddpm_sample(mix.exact_eps, k, (8000, 1), dp.schedule(50),
                                         clip_x0=None))(jax.random.key(3))[:, 0]
    ref = mix.sample(jax.random.key(4), 200_000)[:, 0]
    assert abs(float(x.mean() - ref.mean())) < 0.03
    assert abs(float(x.std() - ref.std())) < 0.03
    assert abs(float(jnp.mean(x < 0) - jnp.mean(ref < 0))) < 0.02   # mass of the left mode


def test_tanh_log_prob_is_latent_log_prob_minus_jacobian():
    """log π(a) = log p(x₀) − Σ log(1 − tanh² x₀): the same draws with and without tanh."""
    net = dp.EpsNet(2, fourier_dim=8, time_hidden=(8,), hidden=(16,))
    obs = jnp.ones((3, 4))
    x0 = jnp.array([[0.1, -0.5], [1.2, 0.3], [-2.0, 0.0]])
    params = jax.jit(net.init)(jax.random.key(0), obs, x0,
                                                                  jnp.zeros((3,)))
    sched, key = dp.schedule(3), jax.random.key(1)
    obs_n = jnp.broadcast_to(obs, (2,) + obs.shape)

    # one compile for both estimates instead of op-by-op eager dispatch
    @jax.jit
    def both(params):
        lp_tanh = logprob.policy_log_prob(net, params, obs, x0, key, sched, 2, "tanh")
        lp_x = logprob.latent_log_prob(lambda x, l: net.apply(params, obs_n, x, l), x0, key,
                                       sched, 2, clip_x0=dp.U_MAX)
        return lp_tanh, lp_x

    lp_tanh, lp_x = both(params)
    jac = jnp.sum(jnp.log(1 - jnp.tanh(x0) ** 2), axis=-1)
    np.testing.assert_allclose(lp_tanh, lp_x - jac, rtol=1e-5, atol=1e-5)
