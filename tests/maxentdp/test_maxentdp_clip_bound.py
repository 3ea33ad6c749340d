"""The official action bound `diffusion.bound = "clip"`: actions stay in [−1, 1], log π is the
density of the clipped action (no Jacobian) and is evaluated at that action in the backup."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.scipy.stats import norm

from lib.maxentdp import agent as agent_lib, diffusion_policy as dp, logprob, q_weighted

OBS, ACT, B = 2, 2, 8


def _agent(bound):
    cfg = agent_lib.AgentConfig(algo="maxentdp", alpha=1.0, batch_size=B, critic_hidden=(8,),
                                steps=4, bound=bound, fourier_dim=4, time_hidden=(8,),
                                eps_hidden=(8,), qne_samples=8, logprob_draws=3,
                                eval_candidates=3)
    agent = agent_lib.make(cfg, OBS, ACT)
    state = jax.jit(agent.init)(jax.random.key(0))
    # Push the ε-network's output far out (bias ±20): x̂₀ = (x − √(1−ᾱ) ε)/√ᾱ leaves the box
    # in opposite directions for the two action dimensions, so the bound is what keeps the
    # actions inside.
    bias = state["actor"]["params"]["MLP_1"]["Dense_1"]["bias"]
    state["actor"]["params"]["MLP_1"]["Dense_1"]["bias"] = bias + jnp.array([20.0, -20.0])
    return agent, state


def _batch():
    r = np.random.default_rng(0)
    return {"obs": jnp.asarray(r.normal(size=(B, OBS)), jnp.float32),
            "action": jnp.asarray(r.uniform(-1, 1, (B, ACT)), jnp.float32).at[0].set(1.0),
            "reward": jnp.asarray(r.normal(size=B), jnp.float32),
            "next_obs": jnp.asarray(r.normal(size=(B, OBS)), jnp.float32),
            "mask": jnp.ones(B)}


@pytest.mark.parametrize("bound", ["clip", "tanh"])
def test_actions_stay_in_the_box_when_the_network_pushes_out(bound):
    agent, state = _agent(bound)
    obs = jnp.asarray(np.random.default_rng(1).normal(size=(64, OBS)), jnp.float32)
    for fn in (agent.act, agent.act_eval):
        a = np.asarray(jax.jit(fn)(state, obs, jax.random.key(2)))
        assert np.all(np.abs(a) <= 1.0), np.abs(a).max()
        # x̂₀ sits on the corner (−1, 1) (tanh: its latent), the last DDPM step adds noise of
        # sd ≈ 0.006 around it: "clip" cuts the half outside to ±1, tanh stays inside
        np.testing.assert_allclose(a, np.broadcast_to([-1.0, 1.0], a.shape), atol=0.03)
        if bound == "clip":
            assert np.mean(np.abs(a) == 1.0) > 0.2, a
        else:
            assert np.all(np.abs(a) < 1.0), a


def test_backup_log_prob_is_the_density_of_the_clipped_action():
    """The critic's target uses a' = clip(x₀) and −α log π(a'|s'); log π must be evaluated at
    that a' (as the official code does), i.e. equal `Agent.log_prob(a')` with the same noise,
    not at the unclipped latent x₀ (which the sampler leaves up to ~1e-2 outside the box)."""
    agent, state = _agent("clip")
    batch, key = _batch(), jax.random.key(5)
    _, metrics = jax.jit(agent.update)(state, batch, key)
    k_next = jax.random.split(key, 3)[0]
    ks, kl = jax.random.split(k_next)
    a_next = jax.jit(agent.act)(state, batch["next_obs"], ks)
    lp = jax.jit(agent.log_prob)(state, batch["next_obs"], a_next, kl)
    np.testing.assert_allclose(metrics["entropy_next"], -jnp.mean(lp), rtol=1e-5)
    # and the QNE step is finite with replay actions on the box's faces (no atanh for "clip")
    assert np.isfinite(float(metrics["actor_loss"])) and np.isfinite(float(metrics["critic_loss"]))


def test_clip_bound_maps_actions_identically_and_has_no_jacobian():
    x = jnp.array([[-1.7, 0.3], [1.0, -1.0], [0.99, 2.5]])
    np.testing.assert_array_equal(dp.to_action(x, "clip"), jnp.clip(x, -1, 1))
    np.testing.assert_array_equal(dp.logprob_latent(x, "clip"), jnp.clip(x, -1, 1))
    np.testing.assert_array_equal(dp.logprob_latent(x, "tanh"), x)
    a = dp.to_action(x, "clip")
    np.testing.assert_array_equal(dp.from_action(a, "clip"), a)
    q = lambda acts: jnp.sum(acts, -1)
    np.testing.assert_allclose(q_weighted.soft_q_log_target(q, 0.5, "clip")(a), q(a) / 0.5)


def _uniform_box_eps(x_t, lsnr):
    """The exact posterior-mean ε of x₀ ~ U[−1, 1]^A: x₀ | x_t is N(x_t/√ᾱ, (1−ᾱ)/ᾱ)
    truncated to [−1, 1] per coordinate."""
    ab = jax.nn.sigmoid(lsnr)[..., None]
    m, s = x_t / jnp.sqrt(ab), jnp.sqrt((1.0 - ab) / ab)
    lo, hi = (-1.0 - m) / s, (1.0 - m) / s
    mean = m + s * (norm.pdf(lo) - norm.pdf(hi)) / jnp.maximum(norm.cdf(hi) - norm.cdf(lo),
                                                                1e-30)
    return (x_t - jnp.sqrt(ab) * mean) / jnp.sqrt(1.0 - ab)


class _ExactNet:
    act_dim = ACT

    def apply(self, params, obs, x, lsnr):
        del params, obs
        return _uniform_box_eps(x, lsnr)


def test_clip_log_prob_with_exact_denoiser_is_the_uniform_box_density():
    """For the uniform policy on [−1, 1]² the action density is −2 log 2 everywhere inside;
    "clip" gives it with no Jacobian (x̂₀ clipped to [−1, 1], which an exact denoiser of a
    distribution in the box never leaves; a tanh Jacobian would add 0.58 nats at
    (0.5, −0.5)). T = 20, 8,192 draws: over 8 keys the estimates at these interior points
    were within 0.06 nats of it (Monte Carlo sd 0.015, quadrature bias ≤ 0.04; the bias
    grows towards the faces, whose density jump the grid resolves coarsely)."""
    acts = jnp.array([[0.0, 0.0], [0.5, -0.5], [-0.4, 0.2]])
    obs = jnp.zeros((3, OBS))
    f = jax.jit(lambda a: logprob.policy_log_prob(_ExactNet(), None, obs, a, jax.random.key(3),
                                                  dp.schedule(20), 8192, "clip"))
    np.testing.assert_allclose(f(acts), -2 * np.log(2.0), atol=0.1)
