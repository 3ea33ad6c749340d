"""2-D Burgers datasets in P2C2Net's setup (ν = 0.005, 4th-order FD, RK4, dt = 1e-3; notes §2.1).

    python tools/make_pde_data.py --config=configs/pde_data/burgers.py:quick --workdir=data/pde

Variants:
  tiny    32² -> 16², 2 + 2 trajectories of 50 steps (tests; seconds).
  quick   128² -> 32², 5 train + 10 test, the first 100 steps discarded, 2000 steps kept
          (a frame every 10 steps); about a minute on 2 CPU cores.
  paper   P2C2Net's 104² -> 26² with every step kept (2001 frames per trajectory).
"""
import ml_collections

from lib.common.config import variant_config
from lib.pde.data_config import spec_from_config

VARIANTS = ("tiny", "quick", "paper")


def validate(config):
    """Schema and physical checks of the dataset request (ValueError before compute)."""
    spec_from_config(config)


def _config(n, factor, duration, save_every, n_train, n_test, chunk_frames=50):
    return ml_collections.ConfigDict(dict(
        pde="burgers",
        params=dict(n=n, viscosity=0.005, dt=1e-3, n_modes=10),
        data=dict(warmup_time=0.1, duration=duration, save_every=save_every, space_factor=factor,
                  downsample="spectral", n_train=n_train, n_test=n_test, seed=0,
                  dtype="float32", chunk_frames=chunk_frames),
    ))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _config(32, 2, 0.05, 5, 2, 2, chunk_frames=5),
        "quick": lambda: _config(128, 4, 2.0, 10, 5, 10),
        "paper": lambda: _config(104, 4, 2.0, 1, 5, 10, chunk_frames=250),
    }, arg, default="quick")
