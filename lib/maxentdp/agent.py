"""MaxEntDP and SAC behind one interface (pure functions over a state pytree).

    agent = make(AgentConfig(...), obs_dim, act_dim)
    state = agent.init(key)
    a = agent.act(state, obs (B, obs_dim), key)        # training: one policy sample
    a = agent.act_eval(state, obs, key)                # evaluation
    state, metrics = agent.update(state, batch, key)   # one gradient step on a replay batch

State: {"actor", "critic", "target_critic", "actor_opt", "critic_opt", "log_alpha",
"alpha_opt", "updates"}. Per update (notes C.1): critic step on the soft TD target
(a' ~ π(·|s'), log π(a'|s') from the noise-level integral for MaxEntDP, when
`backup_entropy`) — or, with `backup = "softmax"`, on soft Q-learning's target
r + γ α log ∫ exp(min Q̄(s', a)/α) da estimated with uniform actions — then the actor step (QNE for MaxEntDP, reparameterised SAC loss), then
the optional temperature step, then the Polyak update of the target critics.

Evaluation: MaxEntDP draws `eval_candidates` actions and keeps the one with the largest
min_i Q̄_i (target critics); SAC takes tanh(μ(s)). α is fixed unless `auto_alpha`
(target entropy −A).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from lib.maxentdp import critics, diffusion_policy as dp, logprob, q_weighted, sac

ALGOS = ("maxentdp", "sac")
BACKUPS = ("policy", "softmax")


@dataclasses.dataclass(frozen=True)
class AgentConfig:
    algo: str = "maxentdp"
    alpha: float = 0.2
    auto_alpha: bool = False
    gamma: float = 0.99
    tau: float = 0.005
    batch_size: int = 256
    critic_hidden: tuple = (256, 256)
    actor_hidden: tuple = (256, 256)       # SAC actor
    critic_lr: float = 3e-4
    actor_lr: float = 3e-4
    alpha_lr: float = 3e-4
    actor_cosine_steps: int = 0            # > 0: cosine decay of the actor lr over these updates
    # "policy": y = r + γ(min Q̄(s', a') − α log π(a'|s')), a' ~ π (soft policy evaluation);
    # "softmax": y = r + γ α log ∫ exp(min Q̄(s', a)/α) da over `backup_samples` uniform a
    backup: str = "policy"
    backup_samples: int = 64
    # diffusion policy (MaxEntDP)
    steps: int = 20
    bound: str = "tanh"
    fourier_dim: int = 64
    time_hidden: tuple = (128, 128)
    eps_hidden: tuple = (256, 256)
    qne_samples: int = 500
    logprob_draws: int = 50
    eval_candidates: int = 10
    backup_entropy: bool = True

    def __post_init__(self):
        checks = [(self.algo in ALGOS, f"algo {self.algo!r} is not one of {list(ALGOS)}"),
                  (self.alpha > 0, f"alpha must be > 0, got {self.alpha}"),
                  (self.steps >= 1, f"diffusion steps must be >= 1, got {self.steps}"),
                  (self.qne_samples >= 1, f"qne_samples must be >= 1, got {self.qne_samples}"),
                  (self.eval_candidates >= 1,
                   f"eval_candidates must be >= 1, got {self.eval_candidates}"),
                  (self.logprob_draws >= 1,
                   f"logprob_draws must be >= 1, got {self.logprob_draws}"),
                  (self.backup in BACKUPS,
                   f"backup {self.backup!r} is not one of {list(BACKUPS)}"),
                  (self.backup_samples >= 1,
                   f"backup_samples must be >= 1, got {self.backup_samples}"),
                  (self.bound in dp.BOUNDS,
                   f"bound {self.bound!r} is not one of {list(dp.BOUNDS)}")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)


class Agent(NamedTuple):
    config: AgentConfig
    init: Callable
    act: Callable
    act_eval: Callable
    update: Callable
    log_prob: Callable   # (state, obs (B, ·), action (B, A), key) -> (B,) log π(a|s)


def _adam(lr: float, cosine_steps: int = 0) -> optax.GradientTransformation:
    return optax.adam(optax.cosine_decay_schedule(lr, cosine_steps) if cosine_steps > 0 else lr)


def make(cfg: AgentConfig, obs_dim: int, act_dim: int) -> Agent:
    q_net = critics.TwinQ(tuple(cfg.critic_hidden))
    critic_opt = _adam(cfg.critic_lr)
    actor_opt = _adam(cfg.actor_lr, cfg.actor_cosine_steps)
    alpha_opt = _adam(cfg.alpha_lr)
    target_entropy = -float(act_dim)
    dummy_o, dummy_a = jnp.zeros((1, obs_dim)), jnp.zeros((1, act_dim))

    if cfg.algo == "maxentdp":
        net = dp.EpsNet(act_dim, cfg.fourier_dim, tuple(cfg.time_hidden), tuple(cfg.eps_hidden))
        sched = dp.schedule(cfg.steps)
        init_actor = lambda k: net.init(k, dummy_o, dummy_a, jnp.zeros((1,)))

        def sample_with_logp(actor, obs, key, need_logp=True):
            ks, kl = jax.random.split(key)
            act, x0 = dp.sample_policy(net, actor, obs, ks, sched, cfg.bound)
            if not need_logp:
                return act, jnp.zeros(obs.shape[0])
            x0 = jax.lax.stop_gradient(dp.logprob_latent(x0, cfg.bound))
            return act, logprob.policy_log_prob(net, actor, obs, x0, kl, sched,
                                                cfg.logprob_draws, cfg.bound)

        def actor_step(state, obs, actions, key, alpha):
            def q_min(a):  # a (K, B, A) -> (K, B) with the target critics
                o = jnp.broadcast_to(obs, a.shape[:-1] + obs.shape[-1:])
                return jnp.min(q_net.apply(state["target_critic"], o, a), axis=0)

            log_target = q_weighted.soft_q_log_target(q_min, alpha, cfg.bound)
            loss_fn = lambda p: q_weighted.qne_loss(net, p, obs, actions, key, log_target,
                                                    cfg.qne_samples, cfg.bound)
            loss, grads = jax.value_and_grad(loss_fn)(state["actor"])
            return grads, loss

        def act(state, obs, key):
            return dp.sample_policy(net, state["actor"], obs, key, sched, cfg.bound)[0]

        def act_eval(state, obs, key):
            n, b = cfg.eval_candidates, obs.shape[0]
            o = jnp.broadcast_to(obs, (n,) + obs.shape).reshape(n * b, -1)
            cand = act(state, o, key)
            q = jnp.min(q_net.apply(state["target_critic"], o, cand), axis=0).reshape(n, b)
            best = jnp.argmax(q, axis=0)
            return cand.reshape(n, b, -1)[best, jnp.arange(b)]

        def log_prob(state, obs, action, key):
            return logprob.policy_log_prob(net, state["actor"], obs,
                                           dp.from_action(action, cfg.bound), key, sched,
                                           cfg.logprob_draws, cfg.bound)
    else:
        actor = sac.GaussianActor(act_dim, tuple(cfg.actor_hidden))
        init_actor = lambda k: actor.init(k, dummy_o)

        def sample_with_logp(params, obs, key, need_logp=True):
            return sac.sample(actor, params, obs, key)

        def actor_step(state, obs, actions, key, alpha):
            q_fn = lambda o, a: q_net.apply(state["critic"], o, a)
            (loss, _), grads = jax.value_and_grad(
                lambda p: sac.actor_loss(actor, p, obs, key, q_fn, alpha), has_aux=True)(
                state["actor"])
            return grads, loss

        def act(state, obs, key):
            return sac.sample(actor, state["actor"], obs, key)[0]

        def act_eval(state, obs, key):
            return sac.deterministic(actor, state["actor"], obs)

        def log_prob(state, obs, action, key):
            mean, log_std = actor.apply(state["actor"], obs)
            u = jnp.arctanh(jnp.clip(action, -1 + 1e-6, 1 - 1e-6))
            return sac.gaussian_log_prob(u, mean, log_std) - q_weighted.log_tanh_jacobian(u)

    def init(key):
        ka, kc = jax.random.split(key)
        actor_params = init_actor(ka)
        critic_params = q_net.init(kc, dummy_o, dummy_a)
        log_alpha = jnp.log(jnp.asarray(cfg.alpha, jnp.float32))
        return {"actor": actor_params, "critic": critic_params, "target_critic": critic_params,
                "actor_opt": actor_opt.init(actor_params),
                "critic_opt": critic_opt.init(critic_params),
                "log_alpha": log_alpha, "alpha_opt": alpha_opt.init(log_alpha),
                "updates": jnp.zeros((), jnp.int32)}

    def update(state, batch, key):
        k_next, k_actor, k_alpha = jax.random.split(key, 3)
        alpha = jnp.exp(state["log_alpha"])
        metrics = {}
        if cfg.backup == "softmax":   # soft Q-learning: V(s') by uniform actions, no policy
            nxt = batch["next_obs"]
            a_u = jax.random.uniform(k_next, (cfg.backup_samples,) + batch["action"].shape,
                                     minval=-1.0, maxval=1.0)
            o = jnp.broadcast_to(nxt, a_u.shape[:-1] + nxt.shape[-1:])
            q_u = jnp.min(q_net.apply(state["target_critic"], o, a_u), axis=0)   # (M, B)
            v = critics.soft_max_value(q_u, alpha, a_u.shape[-1])
            y = batch["reward"] + cfg.gamma * batch["mask"] * v
        else:                         # soft policy evaluation with a' ~ π(·|s')
            a_next, logp_next = sample_with_logp(state["actor"], batch["next_obs"], k_next,
                                                 cfg.backup_entropy or cfg.algo == "sac")
            q_next = q_net.apply(state["target_critic"], batch["next_obs"], a_next)
            y = critics.soft_td_target(batch["reward"], batch["mask"], q_next,
                                       jax.lax.stop_gradient(logp_next), cfg.gamma, alpha)
            metrics["entropy_next"] = -jnp.mean(logp_next)
        y = jax.lax.stop_gradient(y)
        (c_loss, q), c_grads = jax.value_and_grad(
            lambda p: critics.critic_loss(q_net, p, batch["obs"], batch["action"], y),
            has_aux=True)(state["critic"])
        c_upd, c_opt = critic_opt.update(c_grads, state["critic_opt"], state["critic"])
        critic_params = optax.apply_updates(state["critic"], c_upd)
        state = {**state, "critic": critic_params, "critic_opt": c_opt}
        # policy improvement
        a_grads, a_loss = actor_step(state, batch["obs"], batch["action"], k_actor, alpha)
        a_upd, a_opt = actor_opt.update(a_grads, state["actor_opt"], state["actor"])
        state = {**state, "actor": optax.apply_updates(state["actor"], a_upd), "actor_opt": a_opt}
        metrics.update(critic_loss=c_loss, actor_loss=a_loss, q_mean=jnp.mean(q), alpha=alpha)
        if cfg.auto_alpha:
            _, logp = sample_with_logp(state["actor"], batch["obs"], k_alpha)
            t_loss, t_grad = jax.value_and_grad(sac.alpha_loss)(state["log_alpha"], logp,
                                                                target_entropy)
            t_upd, t_opt = alpha_opt.update(t_grad, state["alpha_opt"], state["log_alpha"])
            state = {**state, "log_alpha": optax.apply_updates(state["log_alpha"], t_upd),
                     "alpha_opt": t_opt}
            metrics["entropy"] = -jnp.mean(logp)
        state = {**state, "target_critic": critics.polyak(state["target_critic"],
                                                          state["critic"], cfg.tau),
                 "updates": state["updates"] + 1}
        return state, metrics

    return Agent(cfg, init, act, act_eval, update, log_prob)
