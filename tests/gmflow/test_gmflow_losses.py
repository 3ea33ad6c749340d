"""Losses: K = 1 KL gradients equal L2 flow-matching gradients / 2; transition loss at λ = 1;
the exact denoiser scores better than a perturbed one."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.gmflow import denoising, losses, mixture
from lib.gmflow.networks import GMFlowMLP
from tests.gmflow.gmflow_analytic import data_gm, data_samples


def test_k1_kl_gradients_are_half_the_l2_flow_matching_gradients():
    """K = 1, s = 1 (log-std head zero-initialised): −log N(u; μ, I)/D = ‖u − μ‖²/(2D) + c, so
    every parameter gradient except the log-std head's is exactly 1/2 of the L2 one."""
    model = GMFlowMLP(groups=1, channels=2, num_components=1, width=32, depth=2,
                      coord_embed_dim=8)
    x0 = jnp.asarray(data_samples(64, 0))[:, None, :]
    params = jax.jit(model.init)(jax.random.key(0), x0[:1], jnp.ones((1,)))
    key = jax.random.key(1)

    def grads(kind):
        fn = losses.loss_fn(kind)
        return jax.jit(jax.grad(lambda p: fn(lambda x, t: model.apply(p, x, t), x0, key)))(params)

    g_kl, g_l2 = grads("gm_kl")["params"], grads("l2")["params"]
    # Dense_7/Dense_8: the log-std head (from the (t, class) embedding), untouched by L2.
    logstd_head = {"Dense_7", "Dense_8"}
    assert g_kl["Dense_8"]["kernel"].shape == (32, 1)
    checked = 0
    for name in g_kl:
        for leaf in ("kernel", "bias"):
            if name in logstd_head:
                np.testing.assert_allclose(g_l2[name][leaf], 0.0)
                continue
            np.testing.assert_allclose(g_kl[name][leaf], 0.5 * g_l2[name][leaf], rtol=2e-4,
                                       atol=1e-7)
            checked += 1
    assert checked == 14


def test_transition_loss_prefers_the_exact_denoiser():
    """E[−log q(x_{t_low} | x_t)] is minimised by the true GM; a shifted one scores worse."""
    data = data_gm()
    x0 = jnp.asarray(data_samples(4000, 3))[:, None, :]

    def exact(x, t):
        return denoising.exact_velocity_gm(data, x, t)

    def shifted(x, t):
        gm = exact(x, t)
        return gm._replace(means=gm.means + 0.3)

    key = jax.random.key(2)
    scores = jax.jit(lambda lam: [losses.transition_loss(fn, x0, key, lam, t_min=0.05)
                                   for fn in (exact, shifted)])
    for lam in (0.5, 0.9, 1.0):
        good, bad = map(float, scores(lam))
        assert good < bad - 0.01, (lam, good, bad)


def test_transition_loss_at_lambda_one_is_the_kl_loss_plus_log_sigma():
    """λ = 1: −log q(x₀ | x_t) = −log q(u | x_t) + D log σ_t for the same (x₀, t, noise)."""
    data = data_gm()
    x0 = jnp.asarray(data_samples(8, 4))[:, None, :]

    @jax.jit
    def both_sides():
        t = jnp.linspace(0.1, 0.9, 8)
        eps = jax.random.normal(jax.random.key(0), x0.shape)
        x_t = (1 - t)[:, None, None] * x0 + t[:, None, None] * eps
        gm_u = denoising.exact_velocity_gm(data, x_t, t)
        trans = denoising.transition_gm(denoising.u_to_x0(gm_u, x_t, t), x_t, t, jnp.zeros(8))
        return -mixture.log_prob(trans, x0), -mixture.log_prob(gm_u, eps - x0) + 2 * jnp.log(t)

    lhs, rhs = both_sides()
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4, atol=1e-4)


def test_unknown_loss_and_bad_ratio_raise():
    import pytest
    with pytest.raises(ValueError, match="unknown loss"):
        losses.loss_fn("l1")
    with pytest.raises(ValueError, match="transition ratio"):
        losses.loss_fn("gm_transition", 0.0)
