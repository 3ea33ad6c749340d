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
from lib.multipdenet.config_schema import config, validate  # noqa: F401  (validate: the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "kdv_tiny"),
        "quick": lambda: config(data.get_config("quick"), {
            "tag": "kdv_quick", "model.n_micro": 8, "train.num_steps": 300, "train.window": 9,
            "train.batch_size": 8, "optim.lr": 2e-3, "model.fno_modes": 8,
            "model.fno_width": 16, "baseline.fno_modes": 16, "train.checkpoint_every": 50}),
        "paper": lambda: config(data.get_config("paper"), {
            "tag": "kdv_paper", "train.num_steps": 10000, "train.window": 9,
            "train.batch_size": 32, "optim.lr": 2e-3, "train.checkpoint_every": 500}),
    }, arg, default="quick")
