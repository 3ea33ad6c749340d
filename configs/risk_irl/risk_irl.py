"""Risk-sensitive IRL (Lazzati & Metelli, ICML 2025): CATY-UL and TRACTOR-UL.

    python experiments/risk_irl/main.py --config=configs/risk_irl/risk_irl.py:quick \
        --workdir=workdirs/risk_irl_quick
    # with the 15 participants' answers (never copied into the repository):
    python experiments/risk_irl/main.py --config=configs/risk_irl/risk_irl.py:quick_humans \
        --workdir=workdirs/risk_irl_quick_humans

Variants:
  tiny          tests (seconds): ε₀ = 0.05, T = 10, 2 000 rollouts, one expert and one start,
                a random MDP with 4 states, 1 and 3 environments; no participants (the tests
                add a fixture directory with ε₀ = 0.01). Its sizes make most TRACTOR runs share
                one compiled program (4 runs of one 4-state, 3-action environment).
  quick         the paper's settings on 2 CPU cores (minutes): ε₀ = 0.01 (d = 501), T = 70,
                10⁴ rollouts, investment MDP with risk-averse / neutral / seeking experts ×
                linear / sqrt / square starts × α ∈ {0.01, 0.5, 5, 100, 10³, 10⁴} × 5 seeds,
                random MDPs with (S, A) = (20, 5), (100, 10), (1000, 20) (5, 5, 1 seeds, as
                the paper's 1 for S = 1000), N ∈ {1, 5, 20} environments.
  quick_humans  quick plus the participants' part, reading data/risk_irl (relative to the
                repository root; `python tools/fetch_data.py risk_irl` fetches and verifies
                it; change with --config.participants.data_dir=...).
  paper         quick with 5 seeds at every size and 10⁵ rollouts per estimate (for an
                accelerator; not run here).
"""
import ml_collections

from lib.common.config import variant_config
from lib.risk_irl.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "quick_humans", "paper")
STEP_SIZES = (0.01, 0.5, 5.0, 100.0, 1000.0, 10000.0)


def _build(*, tag, parts, n, num_iters, eval_every, num_traj, inv_seeds, inv_steps,
           adam_steps, sizes, random_seeds, random_eval_every, num_envs, env_seeds,
           set_samples, data_dir="", experts=("sqrt", "linear", "square"),
           inits=("linear", "sqrt", "square")):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = tuple(parts)
    c.grid = dict(horizon=5, n=n)
    c.tractor = dict(num_iters=num_iters, eval_every=eval_every, lipschitz=10.0, method="mc",
                     num_traj=num_traj, num_expert=num_traj, proj_iters=1000)
    c.caty = dict(delta=0.05)
    c.investment = dict(experts=tuple(experts), inits=tuple(inits),
                        step_sizes=tuple(inv_steps), adam_step_sizes=tuple(adam_steps),
                        target_step_size=100.0, num_seeds=inv_seeds, noise=0.25)
    c.participants = dict(data_dir=data_dir, participant=9)
    c.random = dict(num_states=tuple(s for s, _ in sizes), num_actions=tuple(a for _, a in sizes),
                    num_seeds=tuple(random_seeds), step_size=5.0, expert="convex_concave",
                    init="linear", noise=0.25, eval_every=random_eval_every)
    c.multi_env = dict(num_envs=tuple(num_envs), num_states=4, num_actions=3,
                       num_seeds=env_seeds, step_size=1.0, noise=0.25, set_samples=set_samples,
                       set_tolerances=(1e-4, 1e-3, 1e-2), knots=6)
    c.eval = dict(plots=True)
    return c


QUICK = dict(parts=("investment", "random", "multi_env"), n=100, num_iters=70, eval_every=5,
             num_traj=10_000, inv_seeds=5, inv_steps=STEP_SIZES, adam_steps=(0.05, 0.5),
             sizes=((20, 5), (100, 10), (1000, 20)), random_seeds=(5, 5, 1),
             random_eval_every=5, num_envs=(1, 5, 20), env_seeds=3, set_samples=400)


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="risk_irl_tiny", parts=("investment", "random", "multi_env"), n=20,
            num_iters=10, eval_every=5, num_traj=2000, inv_seeds=2, inv_steps=(5.0, 100.0),
            adam_steps=(0.5,), sizes=((4, 3),), random_seeds=(4,), random_eval_every=5,
            num_envs=(1, 3), env_seeds=4, set_samples=40, experts=("sqrt",),
            inits=("linear",)),
        "quick": lambda: _build(tag="risk_irl_quick", **QUICK),
        "quick_humans": lambda: _build(
            tag="risk_irl_quick_humans",
            **{**QUICK, "parts": ("participants", "investment", "random", "multi_env")},
            data_dir="data/risk_irl"),
        "paper": lambda: _build(
            tag="risk_irl_paper", **{**QUICK, "parts": ("participants", "investment", "random",
                                                        "multi_env"),
                                     "num_traj": 100_000, "random_seeds": (5, 5, 5),
                                     "env_seeds": 5, "set_samples": 2000},
            data_dir="data/risk_irl"),
    }, arg, default="quick")
