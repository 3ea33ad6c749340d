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
  official  multi-goal with the official code's set-up: 10,000 uniform random warm-up steps
          (official `start_training`), actions clipped to [−1, 1] (`diffusion.bound =
          "clip"`, the official `clip_sampler`), K = 128 QNE candidates (official 500),
          50,000 steps, 3 vmapped seeds; the rest at the quick scale ((64, 64) networks,
          batch 64, T = 10, 4 log-prob draws per level, α = 10 for both agents) because the
          official (256, 256) / batch 256 / 50 × 20 log-prob draws do not fit 2 shared CPU
          cores. 2,500-step chunks (checkpointed, so a run stopped by `run.time_budget_s`
          resumes).
  official_full  `official` with the official code's sizes as well: K = 500 QNE candidates,
          T = 20, 50 log-prob draws at each of the 20 levels, (256, 256) networks, batch 256
          (the paper's time MLP and Fourier features): for an accelerator (one CPU core: see
          experiments/maxentdp/README.md); resumable across runs with `run.time_budget_s`.
The state-value backup of the critics' target is `agent.backup`: "policy" (soft policy
evaluation with a' ~ π, the paper's) or "softmax" (soft Q-learning's α log ∫ exp(Q/α) da by
`agent.backup_samples` uniform actions; README, "Multi-goal with the soft-max backup").
Pick environments with --config.envs="('multigoal',)" and agents with
--config.algos="('sac',)".
"""
from lib.common.config import variant_config
from lib.maxentdp.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper", "gpu", "official", "official_full")


def _env(*names, **values):
    """The same overrides of each named environment's keys (env.<name>.*)."""
    return {f"env.{name}.{k}": v for name in names for k, v in values.items()}


def _paper_sizes(qne, draws):
    """The paper's networks and batch ((256, 256), time MLP (128, 128), 64 Fourier features,
    batch 256, T = 20) with `qne` QNE candidates and `draws` log-prob draws per level."""
    return {"agent.batch_size": 256, "agent.critic_hidden": (256, 256),
            "agent.actor_hidden": (256, 256), "diffusion.steps": 20,
            "diffusion.fourier_dim": 64, "diffusion.time_hidden": (128, 128),
            "diffusion.eps_hidden": (256, 256), "diffusion.qne_samples": qne,
            "diffusion.logprob_draws": draws}


def _official():
    """The `official` variant's overrides (the official code's multi-goal set-up at quick sizes)."""
    return {"tag": "maxentdp_official", "envs": ("multigoal",), "diffusion.bound": "clip",
            "diffusion.qne_samples": 128,
            **_env("multigoal", num_seeds=3, env_steps=50_000, eval_every=2_500,
                   start_steps=10_000, replay_capacity=50_000),
            **_env("pendulum", num_seeds=3, env_steps=20_000, eval_every=2_000,
                   start_steps=10_000, replay_capacity=20_000),
            "train.keep_checkpoints": 2}


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "maxentdp_tiny", "envs": ("multigoal",), "agent.batch_size": 32,
             "agent.critic_hidden": (32, 32), "agent.actor_hidden": (32, 32),
             "diffusion.steps": 4, "diffusion.fourier_dim": 8, "diffusion.time_hidden": (16,),
             "diffusion.eps_hidden": (32, 32), "diffusion.qne_samples": 16,
             "diffusion.logprob_draws": 2, "diffusion.eval_candidates": 4,
             **_env("multigoal", "pendulum", "hopper", "halfcheetah", num_seeds=2,
                    env_steps=120, eval_every=60, start_steps=40, replay_capacity=200),
             **_env("multigoal", horizon=10, alpha=1.0, eval_episodes=4),
             **_env("pendulum", "hopper", "halfcheetah", horizon=50, eval_episodes=2),
             "multigoal_eval.rollouts": 20, "multigoal_eval.action_samples": 50,
             "train.keep_checkpoints": 2}),
        "quick": lambda: config({"tag": "maxentdp_quick"}),
        "paper": lambda: config(
            {"tag": "maxentdp_paper", "envs": ("multigoal", "pendulum", "hopper", "halfcheetah"),
             "agent.actor_cosine": True, **_paper_sizes(qne=500, draws=50),
             **_env("multigoal", env_steps=50_000, eval_every=5_000, start_steps=5_000,
                    replay_capacity=50_000),
             **_env("pendulum", env_steps=50_000, eval_every=5_000, start_steps=5_000,
                    eval_episodes=10, replay_capacity=50_000),
             **_env("hopper", "halfcheetah", env_steps=1_000_000, eval_every=10_000,
                    start_steps=10_000, eval_episodes=10, replay_capacity=1_000_000),
             "multigoal_eval.action_samples": 1000, "train.checkpoint_every": 5,
             "train.keep_checkpoints": 2}),
        "gpu": lambda: config(
            {"tag": "maxentdp_gpu", "envs": ("hopper", "halfcheetah"),
             **_paper_sizes(qne=128, draws=10),
             **_env("pendulum", env_steps=20_000, eval_every=2_000, start_steps=2_000,
                    replay_capacity=20_000),
             # nominal length only: the time budget stops the run at a chunk boundary
             **_env("hopper", "halfcheetah", env_steps=100_000, eval_every=2_000,
                    start_steps=2_000, eval_episodes=5, replay_capacity=100_000),
             "run.time_budget_s": 330.0, "run.time_share.maxentdp": 0.7,
             "run.time_share.sac": 0.3, "train.keep_checkpoints": 1}),
        "official": lambda: config(_official()),
        "official_full": lambda: config(_official() | _paper_sizes(qne=500, draws=50) | {
            "tag": "maxentdp_official_full"}),
    }, arg, default="quick")
