"""Spurious correlations in ridge regression: Gaussian settings, random features, coloured digits.

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
import ml_collections

from lib.common.config import variant_config
from lib.spurious_ridge.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")


def _build(*, tag, settings, d, seeds, theory_points, rf_d, rf_widths, rf_equiv_width,
           rf_seeds, rf_n_test, digits_seeds, digits_perms, digits_widths, moment_draws,
           num_lambdas=11, rf_num_lambdas=9, digits_num_lambdas=11):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = ("gaussian", "rf", "digits")
    c.gaussian = dict(settings=tuple(settings), d=d, noise=0.5, num_seeds=seeds,
                      theory_points=theory_points, target_rel_err=0.05, lambda_min=1e-3,
                      lambda_max=1e2, num_lambdas=num_lambdas)
    c.rf = dict(setting="base", d=rf_d, activation="tanh", widths=tuple(rf_widths),
                equiv_width=rf_equiv_width, width_sweep_lambda=1e-5, num_seeds=rf_seeds,
                n_test=rf_n_test, lambda_min=1e-5, lambda_max=1e-1, num_lambdas=rf_num_lambdas)
    c.digits = dict(rho=0.8, colour="background", tint=0.5, noise=1.0, train_fraction=0.6,
                    num_seeds=digits_seeds, num_permutations=digits_perms,
                    widths=tuple(digits_widths), rf_lambda=1e-4, activation="tanh",
                    moment_draws=moment_draws, lambda_min=1e-2, lambda_max=1e3,
                    num_lambdas=digits_num_lambdas)
    c.eval = dict(plots=True)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="spurious_ridge_tiny", settings=("base", "overparam"), d=30, seeds=3,
            theory_points=40, rf_d=20, rf_widths=(20, 160), rf_equiv_width=160, rf_seeds=2,
            rf_n_test=200, digits_seeds=2, digits_perms=1, digits_widths=(32, 128),
            moment_draws=1, num_lambdas=6, rf_num_lambdas=4, digits_num_lambdas=5),
        "quick": lambda: _build(
            tag="spurious_ridge_quick",
            settings=("base", "weak_corr", "strong_corr", "simple_y", "overparam"), d=500,
            seeds=10, theory_points=200, rf_d=250,
            rf_widths=(150, 375, 750, 1500, 3000, 6000), rf_equiv_width=3000, rf_seeds=8,
            rf_n_test=1500, digits_seeds=10, digits_perms=5,
            digits_widths=(32, 128, 512, 2048), moment_draws=5),
        "paper": lambda: _build(
            tag="spurious_ridge_paper",
            settings=("base", "weak_corr", "strong_corr", "simple_y", "overparam"), d=2000,
            seeds=50, theory_points=400, rf_d=1000,
            rf_widths=(600, 1500, 3000, 6000, 12000, 24000), rf_equiv_width=12000,
            rf_seeds=20, rf_n_test=4000, digits_seeds=50, digits_perms=10,
            digits_widths=(32, 128, 512, 2048, 8192), moment_draws=20, num_lambdas=21,
            rf_num_lambdas=13, digits_num_lambdas=21),
    }, arg, default="quick")
