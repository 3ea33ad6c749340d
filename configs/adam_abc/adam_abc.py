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
from lib.common.config import variant_config
from lib.adam_abc.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "adam_abc_tiny", "mesh.data": 1, "num_runs": 64, "problem.dim": 4,
             "problem.nonconvex_rows": 8, "problem.n": 32,
             "rate.settings": ("quadratic-gaussian",),
             "rate.extra": ("quadratic-skewed/adam_const_beta2",),
             "rate.horizons": (64, 128, 256), "rate.records": 16,
             "asymptotic.settings": ("quadratic-skewed",), "asymptotic.methods": ("adam",),
             "asymptotic.extra": ("quadratic-skewed/adam_const_beta2",),
             "asymptotic.num_steps": 400, "asymptotic.records": 12}),
        "quick": lambda: config(
            {"tag": "adam_abc_quick", "num_runs": 1024,
             "rate.horizons": (256, 512, 1024, 2048, 4096, 8192), "rate.records": 128,
             "asymptotic.num_steps": 10_000, "asymptotic.records": 60}),
        "paper": lambda: config(
            {"tag": "adam_abc_paper", "num_runs": 16_384,
             "rate.horizons": tuple(2 ** k for k in range(10, 21)),
             "rate.records": 256, "asymptotic.num_steps": 1_000_000, "asymptotic.records": 120}),
    }, arg, default="quick")
