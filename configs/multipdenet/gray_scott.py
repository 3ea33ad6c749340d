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
from experiments.multipdenet.config_schema import validate  # noqa: F401  (used by the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "gray_scott_tiny"),
        "quick": lambda: _base.build(
            _base.coarser(data.get_config("quick"), 4),
            tag="gray_scott_quick", num_steps=300, window=4, batch_size=4,
            lr=2e-3, fno_modes=8, fno_width=12, baseline_fno_modes=12,
            baseline_unet_features=(16, 32, 64), log_every=10,
            checkpoint_every=50),
        "paper": lambda: _base.build(
            data.get_config("paper"), tag="gray_scott_paper", num_steps=10000, window=16,
            batch_size=16, lr=2e-3, checkpoint_every=500),
    }, arg, default="quick")
