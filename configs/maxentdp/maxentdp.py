"""MaxEntDP (diffusion policy, QNE, noise-level log-prob) against SAC on JAX environments.

    python experiments/maxentdp/main.py --config=configs/maxentdp/maxentdp.py:quick \
        --workdir=workdirs/maxentdp_quick

Variants:
  tiny    multi-goal only, 2 seeds, a few hundred steps, tiny networks (tests; seconds).
  quick   multi-goal (MaxEntDP vs SAC at the same fixed α = 10, 10,000 steps; every chunk's
          checkpoint kept for experiments/maxentdp/diagnose_multigoal.py) and gymnax Pendulum (5 vmapped
          seeds; SAC with automatic α) with (64, 64) networks, batch 64, T = 10, K = 64 QNE
          candidates, 4 log-prob draws per level (notes C.6 suggests 8). Minutes on 2 CPU
          cores; the README's numbers.
  paper   the official hyper-parameters (notes C.2): T = 20, K = 500, 50 × 20 log-prob
          evaluations, 10 evaluation candidates, (256, 256) networks, batch 256, 1e6 steps
          with 1e4 random ones, α = 0.05 (hopper) / 0.2 (halfcheetah), 5 seeds, on brax
          hopper and halfcheetah as well; for an accelerator (not run here).
  gpu     the run of the 7-minute H200 slot: brax hopper and halfcheetah, MaxEntDP then SAC,
          5 vmapped seeds, the paper's networks and batch ((256, 256), time MLP (128, 128),
          64 Fourier features, batch 256, T = 20, N = 10) but K = 128 QNE candidates and 10
          log-prob draws per level (paper 500 and 50) to get more environment steps into the
          slot, 2,000-step chunks (evaluation: 5 episodes of 1,000 steps per seed), 2,000
          random steps, constant actor lr (the run's length is set by the clock, so a cosine
          schedule over the nominal 100,000 steps would hardly decay). `run.time_budget_s` =
          330 s for the whole process, 70 % of what is left to MaxEntDP and the rest to SAC
          (stops at a chunk boundary; results.json after every chunk). Run one environment
          per process: --config.envs="('hopper',)".
  official  multi-goal (issue 35, section 2) with the official code's set-up where the issue
          names it: 10,000 uniform random warm-up steps (official `start_training`), actions
          clipped to [−1, 1] (`diffusion.bound = "clip"`, the official `clip_sampler`),
          K = 128 QNE candidates (official 500), 50,000 steps, 3 vmapped seeds; the rest at
          the quick scale ((64, 64) networks, batch 64, T = 10, 4 log-prob draws per level,
          α = 10 for both agents) because the official (256, 256) / batch 256 / 50 × 20
          log-prob draws do not fit 2 shared CPU cores. 2,500-step chunks (checkpointed, so
          a run stopped by `run.time_budget_s` resumes).
The state-value backup of the critics' target is `agent.backup`: "policy" (soft policy
evaluation with a' ~ π, the paper's) or "softmax" (soft Q-learning's α log ∫ exp(Q/α) da by
`agent.backup_samples` uniform actions; README, "Multi-goal with the soft-max backup").
Pick environments with --config.envs="('multigoal',)" and agents with
--config.algos="('sac',)".
"""
import ml_collections

from lib.common.config import variant_config
from lib.maxentdp.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper", "gpu", "official")


def _run(*, horizon, alpha, auto_alpha, seeds, steps, eval_every, start, episodes, capacity,
         **extra):
    return dict(horizon=horizon, alpha=alpha, auto_alpha=tuple(auto_alpha), num_seeds=seeds,
                env_steps=steps, eval_every=eval_every, start_steps=start,
                eval_episodes=episodes, replay_capacity=capacity, **extra)


# Multi-goal α = 10 for both agents: soft Q-learning's multi-goal example (the source of this
# task, haarnoja/softqlearning examples/multigoal_sql.py) trains this very environment with
# reward_scale = 0.1, i.e. α = 10 at reward scale 1. At α = 1 the learned critic's gaps
# between goal directions at the start state are 5-30 α (README, "Diagnosis"), so exp(Q/α)
# has a single mode whatever the policy class.
MULTIGOAL_ALPHA = 10.0

_MULTIGOAL = dict(goal_radius=5.0, threshold=1.0, action_cost=30.0, distance_cost=1.0,
                  goal_reward=10.0, init_std=0.1, bound=7.0)


def _build(*, tag, envs, hidden, eps_hidden, time_hidden, fourier, steps, qne, draws, cands,
           batch, multigoal, pendulum, hopper, halfcheetah, rollouts, action_samples,
           actor_cosine, checkpoint_every, keep_checkpoints=2, time_budget_s=None,
           time_share=(0.5, 0.5), algos=("maxentdp", "sac"), bound="tanh"):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.envs = tuple(envs)
    c.algos = tuple(algos)
    c.agent = dict(gamma=0.99, tau=0.005, batch_size=batch, utd=1, critic_hidden=tuple(hidden),
                   actor_hidden=tuple(hidden), critic_lr=3e-4, actor_lr=3e-4, alpha_lr=3e-4,
                   actor_cosine=actor_cosine, backup="policy", backup_samples=64)
    c.diffusion = dict(steps=steps, bound=bound, fourier_dim=fourier,
                       time_hidden=tuple(time_hidden), eps_hidden=tuple(eps_hidden),
                       qne_samples=qne, logprob_draws=draws, eval_candidates=cands,
                       backup_entropy=True)
    c.env = dict(multigoal={**multigoal, **_MULTIGOAL}, pendulum=pendulum,
                 hopper={**hopper, "backend": "positional"},
                 halfcheetah={**halfcheetah, "backend": "positional"})
    c.multigoal_eval = dict(rollouts=rollouts, action_samples=action_samples)
    # The process's wall-clock budget (None = off) and the shares of it given to the runs of
    # each agent, in order (lib/maxentdp/runs.py: run_deadline, deadlines of train_loop.train).
    # Run-time only: a rerun may change it and still resume (lib/common/workdir.py).
    c.run = dict(time_budget_s=time_budget_s,
                 time_share=dict(maxentdp=time_share[0], sac=time_share[1]))
    c.train = dict(log_every=1, checkpoint_every=checkpoint_every,
                   keep_checkpoints=keep_checkpoints, seed=0)
    return c


def _small_brax(alpha):
    return _run(horizon=1000, alpha=alpha, auto_alpha=("sac",), seeds=5, steps=20_000,
                eval_every=5_000, start=5_000, episodes=2, capacity=20_000)


def _gpu_brax(alpha):
    # Nominal length only: the time budget stops the run at a chunk boundary.
    return _run(horizon=1000, alpha=alpha, auto_alpha=("sac",), seeds=5, steps=100_000,
                eval_every=2_000, start=2_000, episodes=5, capacity=100_000)


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="maxentdp_tiny", envs=("multigoal",), hidden=(32, 32), eps_hidden=(32, 32),
            time_hidden=(16,), fourier=8, steps=4, qne=16, draws=2, cands=4, batch=32,
            multigoal=_run(horizon=10, alpha=1.0, auto_alpha=(), seeds=2, steps=120,
                           eval_every=60, start=40, episodes=4, capacity=200),
            pendulum=_run(horizon=50, alpha=0.1, auto_alpha=("sac",), seeds=2, steps=120,
                          eval_every=60, start=40, episodes=2, capacity=200),
            hopper=_run(horizon=50, alpha=0.05, auto_alpha=("sac",), seeds=2, steps=120,
                        eval_every=60, start=40, episodes=2, capacity=200),
            halfcheetah=_run(horizon=50, alpha=0.2, auto_alpha=("sac",), seeds=2, steps=120,
                             eval_every=60, start=40, episodes=2, capacity=200),
            rollouts=20, action_samples=50, actor_cosine=False, checkpoint_every=1),
        "quick": lambda: _build(
            tag="maxentdp_quick", envs=("multigoal", "pendulum"), hidden=(64, 64),
            eps_hidden=(64, 64), time_hidden=(32,), fourier=16, steps=10, qne=64, draws=4,
            cands=10, batch=64,
            multigoal=_run(horizon=30, alpha=MULTIGOAL_ALPHA, auto_alpha=(), seeds=5,
                           steps=10_000, eval_every=1_000, start=1_000, episodes=10,
                           capacity=10_000),
            pendulum=_run(horizon=200, alpha=0.1, auto_alpha=("sac",), seeds=5, steps=5_000,
                          eval_every=1_000, start=1_000, episodes=5, capacity=5_000),
            hopper=_small_brax(0.05), halfcheetah=_small_brax(0.2),
            rollouts=100, action_samples=500, actor_cosine=False, checkpoint_every=1,
            keep_checkpoints=10),
        "paper": lambda: _build(
            tag="maxentdp_paper", envs=("multigoal", "pendulum", "hopper", "halfcheetah"),
            hidden=(256, 256), eps_hidden=(256, 256), time_hidden=(128, 128), fourier=64,
            steps=20, qne=500, draws=50, cands=10, batch=256,
            multigoal=_run(horizon=30, alpha=MULTIGOAL_ALPHA, auto_alpha=(), seeds=5,
                           steps=50_000,
                           eval_every=5_000, start=5_000, episodes=10, capacity=50_000),
            pendulum=_run(horizon=200, alpha=0.1, auto_alpha=("sac",), seeds=5, steps=50_000,
                          eval_every=5_000, start=5_000, episodes=10, capacity=50_000),
            hopper=_run(horizon=1000, alpha=0.05, auto_alpha=("sac",), seeds=5,
                        steps=1_000_000, eval_every=10_000, start=10_000, episodes=10,
                        capacity=1_000_000),
            halfcheetah=_run(horizon=1000, alpha=0.2, auto_alpha=("sac",), seeds=5,
                             steps=1_000_000, eval_every=10_000, start=10_000, episodes=10,
                             capacity=1_000_000),
            rollouts=100, action_samples=1000, actor_cosine=True, checkpoint_every=5),
        "gpu": lambda: _build(
            tag="maxentdp_gpu", envs=("hopper", "halfcheetah"), hidden=(256, 256),
            eps_hidden=(256, 256), time_hidden=(128, 128), fourier=64, steps=20, qne=128,
            draws=10, cands=10, batch=256,
            multigoal=_run(horizon=30, alpha=MULTIGOAL_ALPHA, auto_alpha=(), seeds=5,
                           steps=10_000, eval_every=1_000, start=1_000, episodes=10,
                           capacity=10_000),
            pendulum=_run(horizon=200, alpha=0.1, auto_alpha=("sac",), seeds=5, steps=20_000,
                          eval_every=2_000, start=2_000, episodes=5, capacity=20_000),
            hopper=_gpu_brax(0.05), halfcheetah=_gpu_brax(0.2),
            rollouts=100, action_samples=500, actor_cosine=False, checkpoint_every=1,
            keep_checkpoints=1, time_budget_s=330.0, time_share=(0.7, 0.3)),
        "official": lambda: _build(
            tag="maxentdp_official", envs=("multigoal",), hidden=(64, 64),
            eps_hidden=(64, 64), time_hidden=(32,), fourier=16, steps=10, qne=128, draws=4,
            cands=10, batch=64, bound="clip",
            multigoal=_run(horizon=30, alpha=MULTIGOAL_ALPHA, auto_alpha=(), seeds=3,
                           steps=50_000, eval_every=2_500, start=10_000, episodes=10,
                           capacity=50_000),
            pendulum=_run(horizon=200, alpha=0.1, auto_alpha=("sac",), seeds=3, steps=20_000,
                          eval_every=2_000, start=10_000, episodes=5, capacity=20_000),
            hopper=_small_brax(0.05), halfcheetah=_small_brax(0.2),
            rollouts=100, action_samples=500, actor_cosine=False, checkpoint_every=1,
            keep_checkpoints=2),
    }, arg, default="quick")
