"""2-D Burgers datasets in P2C2Net's setup (ν = 0.005, 4th-order FD, RK4, dt = 1e-3; notes §2.1).

    python tools/make_pde_data.py --config=configs/pde_data/burgers.py:quick --workdir=data/pde

Variants:
  tiny    32² -> 16², 2 + 2 trajectories of 50 steps (tests; seconds).
  quick   64² -> 16², 5 train + 10 test, the first 100 steps discarded, 8 time units kept (a
          frame every 10 steps, 801 frames): long enough that the learned model's HCT is not
          capped by the horizon. 64² is converged for these fields: from the same ICs (3, the
          128² field truncated to 64²) the 64² and 128² runs differ by at most 1.2e-4 in relative
          L2 at 16² over 8 time units, correlation 1.000000.
  paper   P2C2Net's 104² -> 26² with every step kept (2001 frames per trajectory).
  front   the test ICs of tools/bench/multipdenet_front.py --system=burgers: seed 1 (training
          uses 0), 10 test trajectories as quick's (the same 0.1 warm-up), 128² -> 64², a
          frame every 20 steps (0.02) for HORIZON time units (3 min on 2 shared cores).
          Truth is the dataset's own fine grid, 128², not 4× the finest classical grid: it is
          8× the 16² learned grid, 2× the finest classical point (64²) and the solution the
          learned models were trained on, and it is converged: against a 256² run (dt = 5e-4,
          2 ICs, compared at 64²) its velocity correlation stays >= 0.9999999 and its relative
          L2 difference <= 4e-5 over 10 time units. Even so the HCT (velocity, 0.8) saturates
          at the horizon for every classical grid from 8² (the lowest correlation at 8² is
          0.86), so the front also ranks the points by velocity RMSE.
  front_tiny  32² -> 16², 2 test trajectories of 1 time unit (the front's smoke run).
  front_train the training data of the front's learned point: quick with 20 training
          trajectories (seed 0, never the front's seed 1) saved at 16², 2 test.
"""
import ml_collections

from lib.common.config import variant_config
from lib.pde.data_config import spec_from_config

VARIANTS = ("tiny", "quick", "paper", "front", "front_tiny", "front_train")
HORIZON = 10.0  # time units of the front's truth


def validate(config):
    """Schema and physical checks of the dataset request (ValueError before compute)."""
    spec_from_config(config)


def _config(n, factor, duration, save_every, n_train, n_test, chunk_frames=50, seed=0):
    return ml_collections.ConfigDict(dict(
        pde="burgers",
        params=dict(n=n, viscosity=0.005, dt=1e-3, n_modes=10),
        data=dict(warmup_time=0.1, duration=duration, save_every=save_every, space_factor=factor,
                  downsample="spectral", n_train=n_train, n_test=n_test, seed=seed,
                  dtype="float32", chunk_frames=chunk_frames),
    ))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _config(32, 2, 0.05, 5, 2, 2, chunk_frames=5),
        "quick": lambda: _config(64, 4, 8.0, 10, 5, 10),
        "paper": lambda: _config(104, 4, 2.0, 1, 5, 10, chunk_frames=250),
        "front": lambda: _config(128, 2, HORIZON, 20, 1, 10, seed=1),
        "front_tiny": lambda: _config(32, 2, 1.0, 20, 1, 2, chunk_frames=10, seed=1),
        "front_train": lambda: _config(128, 8, 2.0, 10, 20, 2),
    }, arg, default="quick")
