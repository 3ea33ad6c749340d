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
from lib.common.config import variant_config
from lib.risk_irl.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "quick_humans", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "risk_irl_tiny", "grid.n": 20, "tractor.num_iters": 10,
             "tractor.num_traj": 2000, "tractor.num_expert": 2000,
             "investment.experts": ("sqrt",), "investment.inits": ("linear",),
             "investment.step_sizes": (5.0, 100.0), "investment.adam_step_sizes": (0.5,),
             "investment.num_seeds": 2, "random.num_states": (4,), "random.num_actions": (3,),
             "random.num_seeds": (4,), "multi_env.num_envs": (1, 3), "multi_env.num_seeds": 4,
             "multi_env.set_samples": 40}),
        "quick": lambda: config({"tag": "risk_irl_quick"}),
        "quick_humans": lambda: config(
            {"tag": "risk_irl_quick_humans",
             "parts": ("participants", "investment", "random", "multi_env"),
             "participants.data_dir": "data/risk_irl"}),
        "paper": lambda: config(
            {"tag": "risk_irl_paper",
             "parts": ("participants", "investment", "random", "multi_env"),
             "tractor.num_traj": 100_000, "tractor.num_expert": 100_000,
             "participants.data_dir": "data/risk_irl", "random.num_seeds": (5, 5, 5),
             "multi_env.num_seeds": 5, "multi_env.set_samples": 2000}),
    }, arg, default="quick")
