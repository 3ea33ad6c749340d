"""1-D KdV datasets (u_t + 6 u u_x + u_xxx = 0 on [0, 32), colliding solitons).

    python tools/make_pde_data.py --config=configs/pde_data/kdv.py:quick --workdir=data/pde

Variants:
  tiny    64 -> 32 points, 2 + 2 trajectories of 1 time unit (tests; seconds).
  quick   256 -> 64 points, 5 train + 10 test, 50 time units, a frame every 0.5; seconds.
  paper   512 -> 128 points (dt = 0.005 for the CFL limit), 100 time units, a frame every 0.2.
"""
import ml_collections

from lib.common.config import variant_config
from lib.pde.data_config import spec_from_config

VARIANTS = ("tiny", "quick", "paper")


def validate(config):
    """Schema and physical checks of the dataset request (ValueError before compute)."""
    spec_from_config(config)


def _config(n, factor, duration, save_every, n_train, n_test, dt=0.01, chunk_frames=50):
    return ml_collections.ConfigDict(dict(
        pde="kdv",
        params=dict(n=n, length=32.0, dt=dt, n_solitons=2, min_speed=0.5, max_speed=2.0),
        data=dict(warmup_time=0.0, duration=duration, save_every=save_every, space_factor=factor,
                  downsample="spectral", n_train=n_train, n_test=n_test, seed=0,
                  dtype="float32", chunk_frames=chunk_frames),
    ))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _config(64, 2, 1.0, 10, 2, 2, chunk_frames=5),
        "quick": lambda: _config(256, 4, 50.0, 50, 5, 10),
        "paper": lambda: _config(512, 4, 100.0, 40, 5, 10, dt=0.005),
    }, arg, default="quick")
