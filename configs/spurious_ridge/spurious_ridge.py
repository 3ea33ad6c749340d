"""Spurious correlations in ridge regression: Gaussian settings, random features, coloured
digits (every key's default and rule: lib/spurious_ridge/config_schema.py `KEYS`).

    python experiments/spurious_ridge/main.py --config=configs/spurious_ridge/spurious_ridge.py:quick \
        --workdir=workdirs/spurious_ridge_quick

Variants:
  tiny    d = 30, 3 seeds, two settings, small RF and digits sweeps (tests; seconds).
  quick   d = 500 (D = 1000, n = 500..1500), the five Gaussian settings with 10 training
          sets each on an 11-point λ grid; RF on `base` with d = 250 (n = 750) and
          p = 150..6000; coloured digits over 10 splits. The README's numbers (minutes on
          2 CPU cores). Expected: C^Σ and L^Σ within 5% of the label-noise-averaged
          simulation means at every λ; see experiments/spurious_ridge/README.md.
  paper   d = 2000, 50 seeds, RF with d = 1000 and p up to 16000 (a many-core CPU; the
          linear algebra is float64 numpy, not accelerated).
Run a subset with --config.parts="('gaussian',)"; pick settings with
--config.gaussian.settings="('base','simple_y')".
"""
from lib.common.config import variant_config
from lib.spurious_ridge.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "spurious_ridge_tiny", "gaussian.settings": ("base", "overparam"),
             "gaussian.d": 30, "gaussian.num_seeds": 3, "gaussian.theory_points": 40,
             "gaussian.num_lambdas": 6, "rf.d": 20, "rf.widths": (20, 160),
             "rf.equiv_width": 160, "rf.num_seeds": 2, "rf.n_test": 200, "rf.num_lambdas": 4,
             "digits.num_seeds": 2, "digits.num_permutations": 1, "digits.widths": (32, 128),
             "digits.moment_draws": 1, "digits.num_lambdas": 5}),
        "quick": lambda: config(
            {"tag": "spurious_ridge_quick", "gaussian.d": 500, "gaussian.num_seeds": 10,
             "gaussian.theory_points": 200, "gaussian.num_lambdas": 11, "rf.d": 250,
             "rf.widths": (150, 375, 750, 1500, 3000, 6000), "rf.equiv_width": 3000,
             "rf.num_seeds": 8, "rf.n_test": 1500, "rf.num_lambdas": 9, "digits.num_seeds": 10,
             "digits.num_permutations": 5, "digits.widths": (32, 128, 512, 2048),
             "digits.moment_draws": 5, "digits.num_lambdas": 11}),
        "paper": lambda: config(
            {"tag": "spurious_ridge_paper", "gaussian.d": 2000, "gaussian.num_seeds": 50,
             "gaussian.theory_points": 400, "gaussian.num_lambdas": 21, "rf.d": 1000,
             "rf.widths": (600, 1500, 3000, 6000, 12_000, 24_000), "rf.equiv_width": 12_000,
             "rf.num_seeds": 20, "rf.n_test": 4000, "rf.num_lambdas": 13, "digits.num_seeds": 50,
             "digits.num_permutations": 10, "digits.widths": (32, 128, 512, 2048, 8192),
             "digits.moment_draws": 20, "digits.num_lambdas": 21}),
    }, arg, default="quick")
