"""MultiPDENet on 2-D Burgers (P2C2Net's data: ν = 0.005, 4th-order FD + RK4 at dt = 1e-3).

    python experiments/multipdenet/main.py --config=configs/multipdenet/burgers.py:quick

Variants:
  tiny    32² -> 16² data, FNOs with 4 modes, a few steps (tests; seconds).
  quick   64² -> 16², 5 train / 10 test trajectories of 801 frames (ΔT = 0.01, 8 time
          units), M = 4, windows of 4 macro steps; the README's main job (minutes on 2 CPU cores).
  front   the learned point of tools/bench/multipdenet_front.py --system=burgers: quick with
          20 training trajectories (`front_train` data, 128² -> 16²), batch 8, 500 steps.
  paper   104² -> 26² with ΔT = 1e-3 (P2C2Net's grid; every solver step kept), longer
          training; for accelerators.
Baselines and ablations are overrides, e.g. --config.model.name=fno,
--config.model.filter_mode=frozen, --config.model.macro_net=none.
"""
from configs.multipdenet import _base
from configs.pde_data import burgers as data
from lib.multipdenet.config_schema import config, validate  # noqa: F401  (validate: the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper", "front")

# quick saves 64² -> 16²: on 32² the classical FD4 solver already tracks the truth for the
# whole horizon (HCT = 2.0, RMSE 2e-3), so there is nothing to learn; on 16² it is
# under-resolved (it blows up on some test trajectories), the regime MultiPDENet targets.


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "burgers_tiny"),
        "quick": lambda: config(data.get_config("quick"), {
            "tag": "burgers_quick", "train.num_steps": 250, "train.window": 4,
            "train.batch_size": 4, "optim.lr": 3e-3, "model.fno_modes": 4,
            "baseline.fno_modes": 8, "train.checkpoint_every": 50}),
        "front": lambda: config(data.get_config("front_train"), {
            "tag": "burgers_front", "train.num_steps": 500, "train.window": 4,
            "train.batch_size": 8, "optim.lr": 3e-3, "model.fno_modes": 4,
            "baseline.fno_modes": 8, "train.checkpoint_every": 100}),
        "paper": lambda: config(data.get_config("paper"), {
            "tag": "burgers_paper", "train.num_steps": 10000, "train.window": 20,
            "train.batch_size": 16, "optim.lr": 5e-3, "train.checkpoint_every": 500}),
    }, arg, default="quick")
