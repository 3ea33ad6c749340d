"""One SAC update against a hand computation on a tiny batch (and the shared critic pieces)."""
import jax
import jax.numpy as jnp
import numpy as np

from lib.maxentdp import agent as agent_lib, critics, sac

OBS, ACT, B = 3, 2, 4


def _batch():
    r = np.random.default_rng(0)
    return {"obs": jnp.asarray(r.normal(size=(B, OBS)), jnp.float32),
            "action": jnp.asarray(r.uniform(-0.9, 0.9, (B, ACT)), jnp.float32),
            "reward": jnp.asarray(r.normal(size=B), jnp.float32),
            "next_obs": jnp.asarray(r.normal(size=(B, OBS)), jnp.float32),
            "mask": jnp.array([1.0, 0.0, 1.0, 1.0])}


def _hand_sample(actor, params, obs, key):
    """tanh-Gaussian sample and its log-density written out in numpy."""
    mean, log_std = map(np.asarray, actor.apply(params, obs))
    n = np.asarray(jax.random.normal(key, mean.shape))
    u = mean + np.exp(log_std) * n
    logp = np.sum(-0.5 * n ** 2 - log_std - 0.5 * np.log(2 * np.pi), -1)
    return np.tanh(u), logp - np.sum(np.log(1 - np.tanh(u) ** 2), -1)


def test_sac_update_matches_hand_computation():
    cfg = agent_lib.AgentConfig(algo="sac", alpha=0.3, auto_alpha=True, gamma=0.9, tau=0.1,
                                batch_size=B, critic_hidden=(5,), actor_hidden=(6,),
                                critic_lr=1e-2, actor_lr=2e-2, alpha_lr=5e-2)
    agent = agent_lib.make(cfg, OBS, ACT)
    state = jax.jit(agent.init)(jax.random.key(0))
    state = {**state, "target_critic": jax.tree.map(lambda x: x + 0.05, state["critic"])}
    batch, key = _batch(), jax.random.key(7)
    new, metrics = jax.jit(agent.update)(state, batch, key)
    k_next, k_actor, k_alpha = jax.random.split(key, 3)
    actor, q_net = sac.GaussianActor(ACT, (6,)), critics.TwinQ((5,))

    # critic: y = r + γ m (min Q̄(s', a') − α log π(a'|s')), loss Σ_i mean (Q_i − y)²
    a_next, logp_next = _hand_sample(actor, state["actor"], batch["next_obs"], k_next)
    q_next = np.asarray(q_net.apply(state["target_critic"], batch["next_obs"], a_next))
    y = np.asarray(batch["reward"]) + 0.9 * np.asarray(batch["mask"]) * (
        q_next.min(0) - 0.3 * logp_next)
    loss = lambda p: jnp.sum((q_net.apply(p, batch["obs"], batch["action"]) - y) ** 2) / B
    loss_value, g = jax.jit(jax.value_and_grad(loss))(state["critic"])
    np.testing.assert_allclose(metrics["critic_loss"], loss_value, rtol=1e-5)
    # Adam's first step moves every parameter by lr·g/(|g| + 1e-8)
    critic = jax.tree.map(lambda p, gg: p - 1e-2 * gg / (jnp.abs(gg) + 1e-8), state["critic"], g)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), new["critic"], critic)
    # target: θ̄ ← 0.9 θ̄ + 0.1 θ_new
    jax.tree.map(lambda a, t, c: np.testing.assert_allclose(a, 0.9 * t + 0.1 * c, atol=1e-6),
                 new["target_critic"], state["target_critic"], critic)

    # actor: mean(α log π(a|s) − min_i Q_i(s, a)) with the *updated* critic
    def actor_loss(p):
        mean, log_std = actor.apply(p, batch["obs"])
        n = jax.random.normal(k_actor, mean.shape)
        u = mean + jnp.exp(log_std) * n
        logp = (jnp.sum(-0.5 * n ** 2 - log_std - 0.5 * jnp.log(2 * jnp.pi), -1)
                - jnp.sum(jnp.log(1 - jnp.tanh(u) ** 2), -1))
        return jnp.mean(0.3 * logp - jnp.min(q_net.apply(critic, batch["obs"], jnp.tanh(u)), 0))
    actor_loss_value, ga = jax.jit(jax.value_and_grad(actor_loss))(state["actor"])
    np.testing.assert_allclose(metrics["actor_loss"], actor_loss_value, rtol=1e-4)
    actor_new = jax.tree.map(lambda p, gg: p - 2e-2 * gg / (jnp.abs(gg) + 1e-8), state["actor"], ga)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-5), new["actor"], actor_new)

    # temperature: d/dlogα [−α mean(log π + H̄)] = −α mean(log π + H̄), H̄ = −A, one Adam step
    _, logp = _hand_sample(actor, actor_new, batch["obs"], k_alpha)
    g_alpha = -0.3 * np.mean(logp - ACT)
    np.testing.assert_allclose(new["log_alpha"], np.log(0.3) - 5e-2 * np.sign(g_alpha), atol=1e-5)
    assert int(new["updates"]) == 1


def test_td_target_drops_bootstrap_only_at_terminals():
    q_next = jnp.array([[1.0, 2.0], [3.0, -1.0]])
    y = critics.soft_td_target(jnp.array([0.5, 0.5]), jnp.array([1.0, 0.0]), q_next,
                               jnp.array([2.0, 2.0]), 0.9, 0.25)
    np.testing.assert_allclose(y, [0.5 + 0.9 * (1.0 - 0.5), 0.5], rtol=1e-6)


def test_sac_log_prob_integrates_to_one_in_1d():
    """The tanh-Gaussian density of `sac.sample` integrates to 1 over (−1, 1) (zeroed
    weights: u ~ N(0, 1), so the mass beyond ±0.9999 is below 1e-6)."""
    actor = sac.GaussianActor(1, (4,))
    params = jax.tree.map(jnp.zeros_like, actor.init(jax.random.key(0), jnp.zeros((1, 2))))
    agent = agent_lib.make(agent_lib.AgentConfig(algo="sac", actor_hidden=(4,)), 2, 1)
    state = {"actor": params}
    a = jnp.linspace(-0.9999, 0.9999, 40001)[:, None]
    obs = jnp.broadcast_to(jnp.array([[0.3, -1.2]]), (a.shape[0], 2))
    log_prob = jax.jit(agent.log_prob)
    dens = jnp.exp(log_prob(state, obs, a, jax.random.key(0)))
    assert abs(float(jnp.trapezoid(dens, a[:, 0])) - 1.0) < 1e-3
