"""MultiPDENet on 2-D Gray–Scott reaction–diffusion (Pearson's stripes; notes §1.3, §2.3).

    python experiments/multipdenet/main.py --config=configs/multipdenet/gray_scott.py:quick

Variants:
  tiny    32² -> 16² data, tiny networks (tests; seconds).
  quick   128² -> 32² (L = 2.5), 5 train / 10 test trajectories, a frame every 10 time
          units for 2000 time units, M = 4 (minutes on 2 CPU cores).
  paper   256² -> 64², 4000 saved time units; for accelerators.
"""
from configs.multipdenet import _base
from configs.pde_data import gray_scott as data
from lib.multipdenet.config_schema import config, validate  # noqa: F401  (validate: the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "gray_scott_tiny"),
        "quick": lambda: config(_base.coarser(data.get_config("quick"), 4), {
            "tag": "gray_scott_quick", "train.num_steps": 300, "train.window": 4,
            "train.batch_size": 4, "optim.lr": 2e-3, "model.fno_modes": 8,
            "baseline.unet_features": (16, 32, 64), "train.checkpoint_every": 50}),
        "paper": lambda: config(data.get_config("paper"), {
            "tag": "gray_scott_paper", "train.num_steps": 10000, "train.window": 16,
            "train.batch_size": 16, "optim.lr": 2e-3, "train.checkpoint_every": 500}),
    }, arg, default="quick")
