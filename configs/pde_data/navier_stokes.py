"""Kolmogorov-flow datasets (2-D Navier–Stokes, Re = 1000, forcing sin(4y), drag 0.1).

    python tools/make_pde_data.py --config=configs/pde_data/navier_stokes.py:quick --workdir=data/pde

Variants:
  tiny        32² -> 16², 2 + 2 trajectories of 0.2 time units (tests; seconds).
  quick       256² -> 64², 5 train + 10 test trajectories, 1 time unit of warm-up and 3
              saved (108 frames, one every 16 steps = 0.028, MultiPDENet's macro step 4·dt₆₄);
              about 6 minutes on 2 CPU cores.
  paper       2048² -> 64² as in LI/TSM (notes §2.2): dt = 0.5·(2π/2048)/7 ≈ 2.19e-4, a frame
              every 32 steps (dt₆₄ ≈ 7.01e-3), 40 time units of warm-up, 20 saved; for GPUs.
  paper_4pi   the [0, 4π]² domain of §4.5 at the same resolution: 4096² -> 128².
  quick_attractor  quick, but saved after ATTRACTOR_WARMUP = 15 time units of warm-up, when
              the energy spectrum is stationary, so the samples are the statistically
              steady Kolmogorov flow, not the decaying transient of the random field that
              quick samples (6× quick's simulated time).
  front       the test ICs of tools/bench/multipdenet_front.py: seed 1 (training uses 0),
              10 test trajectories on the attractor, 256² -> 128², a frame every 32 steps
              (0.056) for 10 time units; for a machine with a GPU or hours of CPU.
  front_tiny  64² -> 32², 2 test trajectories of 0.56 time units (the front's smoke run).
  front_train the training data of the front's learned points: quick_attractor with 20
              training trajectories (seed 0, never the front's seed 1) saved at 32², 2 test.
  front_train_64  front_train saved at 64² (the front's 64² learned points).
  heldout_2, heldout_3, heldout_4  the held-out ICs of the fair front: front's set-up with
              seeds 2, 3 and 4 (no training or model choice ever used them), 10 test
              trajectories each; the front tool's `--truth=heldout` takes all three (30 ICs).
  confirm     10 ICs of seed 6 in the held-out set-up, looked at once: they recheck the one
              model chosen on the held-out ICs (`--truth=confirm`).
  confirm_7   10 ICs of seed 7, the same set-up, for the next model chosen on the held-out
              ICs (`--truth=confirm_7`): each confirmation set is looked at once.
  stats       the statistics front's truth: seed 5, 2 test trajectories on the attractor,
              256² -> 128², 60 time units saved every 320 steps (0.56), for time-averaged
              energy spectra and vorticity PDFs over the last 50 units.
  front_train_64_large  front_train_64 with 120 training trajectories of 6 saved time units
              each (214 frames), 2 test: about 82 s of one CPU core per trajectory, 2.8 h in
              all; generate it in resumable shards on every core (tools/make_pde_data.py
              --shard_size=2 --processes=2).
"""
import math

import ml_collections

from lib.common.config import variant_config
from lib.pde.data_config import spec_from_config

VARIANTS = ("tiny", "quick", "paper", "paper_4pi", "quick_attractor", "front", "front_tiny",
            "front_train", "front_train_64", "heldout_2", "heldout_3", "heldout_4", "confirm",
            "confirm_7", "stats", "front_train_64_large")
# Time units after the random field (max speed 7) until the energy spectrum is stationary:
# measured at 64² (3 ICs, 30 units), the spectrum averaged over 3 time units stays within
# 20 % (relative L1) of its late-time mean from t = 14 on, and the rms speed settles at
# 1.4-1.5 (from 2.9); tools/bench/multipdenet_attractor.py, experiments/multipdenet/NOTES.md.
ATTRACTOR_WARMUP = 15.0
HELDOUT_SEEDS = (2, 3, 4)


def validate(config):
    """Schema and physical checks of the dataset request (ValueError before compute)."""
    spec_from_config(config)


def _config(n, factor, warmup_time, duration, save_every, n_train, n_test, length=2 * math.pi,
            chunk_frames=50, seed=0):
    return ml_collections.ConfigDict(dict(
        pde="navier_stokes",
        params=dict(n=n, length=length, viscosity=1e-3, drag=0.1, forcing_wavenumber=4,
                    forcing_scale=1.0, max_velocity=7.0, peak_wavenumber=4.0, cfl=0.5),
        data=dict(warmup_time=warmup_time, duration=duration, save_every=save_every,
                  space_factor=factor, downsample="spectral", n_train=n_train, n_test=n_test,
                  seed=seed, dtype="float32", chunk_frames=chunk_frames),
    ))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _config(32, 2, 0.2, 0.2, 4, 2, 2, chunk_frames=5),
        "quick": lambda: _config(256, 4, 1.0, 3.0, 16, 5, 10, chunk_frames=16),
        "paper": lambda: _config(2048, 32, 40.0, 20.0, 32, 5, 10),
        "paper_4pi": lambda: _config(4096, 32, 40.0, 20.0, 32, 5, 10, length=4 * math.pi),
        "quick_attractor": lambda: _config(256, 4, ATTRACTOR_WARMUP, 3.0, 16, 5, 10, chunk_frames=16),
        "front": lambda: _config(256, 2, ATTRACTOR_WARMUP, 10.0, 32, 1, 10, chunk_frames=16, seed=1),
        "front_tiny": lambda: _config(64, 2, 0.5, 0.56, 8, 1, 2, chunk_frames=5, seed=1),
        "front_train": lambda: _config(256, 8, ATTRACTOR_WARMUP, 3.0, 16, 20, 2, chunk_frames=16),
        "front_train_64": lambda: _config(256, 4, ATTRACTOR_WARMUP, 3.0, 16, 20, 2, chunk_frames=16),
        **{f"heldout_{s}": (lambda s=s: _config(256, 2, ATTRACTOR_WARMUP, 10.0, 32, 1, 10,
                                                chunk_frames=16, seed=s)) for s in HELDOUT_SEEDS},
        "confirm": lambda: _config(256, 2, ATTRACTOR_WARMUP, 10.0, 32, 1, 10, chunk_frames=16, seed=6),
        "confirm_7": lambda: _config(256, 2, ATTRACTOR_WARMUP, 10.0, 32, 1, 10, chunk_frames=16, seed=7),
        "stats": lambda: _config(256, 2, ATTRACTOR_WARMUP, 60.0, 320, 1, 2, chunk_frames=4, seed=5),
        # Measured cost: 82 s of CPU per trajectory (11,980 steps at 256², a pair per batch on
        # one core: 0.0132 s per step of the pair, plus ~7 s of compilation per shard), so
        # 2.8 h of one uncontended core for the 122 (a 2-trajectory run, warm-up cut to 1 unit).
        "front_train_64_large": lambda: _config(256, 4, ATTRACTOR_WARMUP, 6.0, 16, 120, 2,
                                                chunk_frames=16),
    }, arg, default="quick")
