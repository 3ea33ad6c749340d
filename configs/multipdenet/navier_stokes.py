"""MultiPDENet on 2-D Kolmogorov flow (Re = 1000, forcing sin(4y), drag 0.1; notes §2.2).

    python experiments/multipdenet/main.py --config=configs/multipdenet/navier_stokes.py:quick

Variants:
  tiny    32² -> 16² data, tiny networks, a few steps (tests; seconds).
  quick   256² -> 32² pseudo-spectral DNS (2 time units of warm-up, 4 saved), ΔT = 0.028
          (= 4·dt₆₄, the notes' reading of "128Δt"), M = 4; 5 train / 10 test
          trajectories. 32² rather than the paper's 64² keeps a run to minutes on 2 CPU
          cores; at 32² the flow is badly under-resolved, which is MultiPDENet's regime.
  paper   2048² -> 64² as in LI/TSM (20 saved time units); for accelerators.
Generalisation (unseen Re, forcing, the [0, 4π]² domain) uses the same trained workdir
with `tools/multipdenet_generalize.py`.
"""
from configs.multipdenet import _base
from configs.pde_data import navier_stokes as data
from experiments.multipdenet.config_schema import validate  # noqa: F401  (used by the config test)
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _base.tiny(data.get_config("tiny"), "navier_stokes_tiny"),
        "quick": lambda: _base.build(
            _base.coarser(data.get_config("quick"), 8),
            tag="navier_stokes_quick", num_steps=300, window=4, batch_size=4,
            lr=2e-3, fno_modes=8, fno_width=12, baseline_fno_modes=12, log_every=10,
            checkpoint_every=50),
        "paper": lambda: _base.build(
            data.get_config("paper"), tag="navier_stokes_paper", num_steps=20000, window=16,
            batch_size=16, lr=2e-3, checkpoint_every=1000),
    }, arg, default="quick")
