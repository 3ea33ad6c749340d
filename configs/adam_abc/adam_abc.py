"""Adam under L-smoothness and the ABC inequality: rates, last-iterate behaviour, controls.

    python experiments/adam_abc/main.py --config=configs/adam_abc/adam_abc.py:quick \
        --workdir=workdirs/adam_abc_quick

Variants:
  tiny    64 runs, d = 4, horizons 64..256, two short asymptotic runs (tests; seconds).
  quick   1024 runs per setting and horizon, d = 10; horizons T = 256..8192 for seven
          problem/noise settings under Adam and SGD, plus the ε check and two negative
          controls; 10,000-step Robbins–Monro runs on four settings plus three controls.
          The README's numbers (about 10 minutes on 2 busy CPU cores). Expected: Adam's
          and SGD's slopes of (1/T)Σ E‖∇f(θ_t)‖² and min_t E‖∇f(θ_t)‖² against T within
          ±0.1 of −1/2; the controls' slopes near 0; see experiments/adam_abc/README.md.
  paper   16384 runs, horizons 2^10..2^20, 10^6-step asymptotic runs (an accelerator;
          shard the runs over all devices with the default mesh).
Pick settings with --config.rate.settings="('quadratic-gaussian',)" and parts with
--config.parts="('rate',)".
"""
import ml_collections

from lib.adam_abc.config_schema import validate  # noqa: F401  (used by the config test)
from lib.common.config import mesh_block, variant_config

VARIANTS = ("tiny", "quick", "paper")

RATE_SETTINGS = ("quadratic-gaussian", "quadratic-student_t", "quadratic-multiplicative",
                 "quadratic-skewed", "nonconvex-gaussian", "least_squares-minibatch",
                 "logistic-minibatch")
RATE_EXTRA = ("quadratic-gaussian/adam_eps", "quadratic-gaussian/adam_const_alpha",
              "quadratic-skewed/adam_const_beta2")
ASYMPTOTIC_SETTINGS = ("quadratic-gaussian", "quadratic-skewed", "nonconvex-student_t",
                       "least_squares-minibatch")
ASYMPTOTIC_EXTRA = ("quadratic-gaussian/adam_const_alpha", "quadratic-skewed/adam_const_beta2",
                    "quadratic-gaussian/adam_const_beta2")


def _build(*, tag, num_runs, dim, horizons, records, rate_settings, rate_methods, rate_extra,
           asym_settings, asym_methods, asym_extra, num_steps, asym_records, n=256):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = ("rate", "asymptotic")
    c.num_runs = num_runs
    c.problem = dict(dim=dim, condition=10.0, init_distance=3.0, nonconvex_rows=2 * dim,
                     nonconvex_lambda=1.0, label_noise=1.0, n=n, logistic_signal=2.0,
                     data_seed=0)
    c.noise = dict(sigma=1.0, mult=1.0, student_df=3, skew_p=0.05, batch_size=2)
    c.adam = dict(b1=0.9, eps=1e-8, eps_alt=0.1, v_init=0.0)
    c.rate = dict(settings=tuple(rate_settings), methods=tuple(rate_methods),
                  extra=tuple(rate_extra), horizons=tuple(horizons), records=records,
                  alpha_hat=1.0, sgd_alpha_hat=2.0, beta2_c=1.0, control_beta2=0.9,
                  theory_slope=-0.5, tolerance=0.1, num_boot=200)
    c.asymptotic = dict(settings=tuple(asym_settings), methods=tuple(asym_methods),
                        extra=tuple(asym_extra), num_steps=num_steps, records=asym_records,
                        alpha0=1.0, sgd_alpha0=2.0, power=0.6, offset=10.0, beta2_c=1.0,
                        beta2_power=0.6, control_alpha=0.1, control_beta2=0.9,
                        threshold=0.1, late_from=0.1, min_decay=0.1)
    c.eval = dict(plots=True)
    c.mesh = mesh_block()
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="adam_abc_tiny", num_runs=64, dim=4, horizons=(64, 128, 256), records=16,
            rate_settings=("quadratic-gaussian",), rate_methods=("adam", "sgd"),
            rate_extra=("quadratic-skewed/adam_const_beta2",),
            asym_settings=("quadratic-skewed",), asym_methods=("adam",),
            asym_extra=("quadratic-skewed/adam_const_beta2",), num_steps=400,
            asym_records=12, n=32),
        "quick": lambda: _build(
            tag="adam_abc_quick", num_runs=1024, dim=10,
            horizons=(256, 512, 1024, 2048, 4096, 8192), records=128,
            rate_settings=RATE_SETTINGS, rate_methods=("adam", "sgd"), rate_extra=RATE_EXTRA,
            asym_settings=ASYMPTOTIC_SETTINGS, asym_methods=("adam", "sgd"),
            asym_extra=ASYMPTOTIC_EXTRA, num_steps=10_000, asym_records=60),
        "paper": lambda: _build(
            tag="adam_abc_paper", num_runs=16384, dim=10,
            horizons=tuple(2 ** k for k in range(10, 21)), records=256,
            rate_settings=RATE_SETTINGS, rate_methods=("adam", "sgd"), rate_extra=RATE_EXTRA,
            asym_settings=ASYMPTOTIC_SETTINGS, asym_methods=("adam", "sgd"),
            asym_extra=ASYMPTOTIC_EXTRA, num_steps=1_000_000, asym_records=120),
    }, arg, default="quick")
