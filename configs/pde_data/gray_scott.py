"""2-D Gray–Scott datasets (Pearson's L = 2.5, D_u = 2e-5, D_v = 1e-5, F = 0.04, κ = 0.06).

    python tools/make_pde_data.py --config=configs/pde_data/gray_scott.py:quick --workdir=data/pde

Variants:
  tiny    32² -> 16² on [0, 1.25)², 2 + 2 trajectories (tests; seconds).
  quick   128² -> 64², 5 train + 10 test; 1000 time units of warm-up (stripes fill part of
          the domain), 2000 saved (a frame every 10 steps of dt = 1); about a minute.
  paper   256² -> 64² (Pearson's grid), 2000 warm-up, 4000 saved, a frame every 20 steps.
Grids coarser than 128² on L = 2.5 do not resolve the stripes (the pattern freezes).
"""
import ml_collections

from lib.common.config import variant_config
from lib.pde.data_config import spec_from_config

VARIANTS = ("tiny", "quick", "paper")


def validate(config):
    """Schema and physical checks of the dataset request (ValueError before compute)."""
    spec_from_config(config)


def _config(n, factor, length, warmup_time, duration, save_every, n_train, n_test, chunk_frames=50):
    return ml_collections.ConfigDict(dict(
        pde="gray_scott",
        params=dict(n=n, length=length, diffusivity_u=2e-5, diffusivity_v=1e-5, feed=0.04,
                    kill=0.06, dt=1.0, n_squares=4),
        data=dict(warmup_time=warmup_time, duration=duration, save_every=save_every,
                  space_factor=factor, downsample="spectral", n_train=n_train, n_test=n_test,
                  seed=0, dtype="float32", chunk_frames=chunk_frames),
    ))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _config(32, 2, 1.25, 10.0, 40.0, 10, 2, 2, chunk_frames=2),
        "quick": lambda: _config(128, 2, 2.5, 1000.0, 2000.0, 10, 5, 10),
        "paper": lambda: _config(256, 4, 2.5, 2000.0, 4000.0, 20, 5, 10),
    }, arg, default="quick")
