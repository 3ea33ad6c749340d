"""MultiPDENet on 1-D KdV (u_t + 6 u u_x + u_xxx = 0, colliding solitons; notes §1.3, §2.3).

    python experiments/multipdenet/main.py --config=configs/multipdenet/kdv.py:quick

Variants:
  tiny    64 -> 32 points (tests; seconds).
  quick   256 -> 64 points on [0, 32), a frame every 0.5 for 50 time units, M = 8 (the
          explicit RK4 micro step must resolve the dispersive u_xxx term: at M = 4 the
          untrained Physics Block is unstable); the notes' sample length of 10 frames is
          the training window (minutes on 2 CPU cores). On 32 points (h = 1) the FD
          Physics Block blows up within 4 macro steps whatever M: the solitons are not
          resolved.
  paper   512 -> 128 points, 100 time units; for accelerators.
"""
from configs.multipdenet import _base
from configs.pde_data import kdv as data
from experiments.multipdenet.config_schema import validate  # noqa: F401  (used by the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "kdv_tiny"),
        "quick": lambda: _base.build(
            data.get_config("quick"), n_micro=8,
            tag="kdv_quick", num_steps=300, window=9, batch_size=8, lr=2e-3,
            fno_modes=8, fno_width=16, baseline_fno_modes=16, log_every=10,
            checkpoint_every=50),
        "paper": lambda: _base.build(
            data.get_config("paper"), tag="kdv_paper", num_steps=10000, window=9,
            batch_size=32, lr=2e-3, checkpoint_every=500),
    }, arg, default="quick")
