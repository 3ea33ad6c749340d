"""CADES: conformal anomaly detection in event sequences (Zhang et al., ICML 2025).

    python experiments/cades/main.py --config=configs/cades/cades.py:quick --workdir=workdirs/cades_quick

Variants:
  tiny    1 SPP family, server_stop, 2 seeds, a few dozen sequences, 30 neural steps, FPR
          over 20 splits (tests; under a minute).
  quick   the 9 SPP families (T = 100, η ∈ {0, 0.25, 0.5, 0.75}, 3 seeds, 200 calibration /
          100 ID test / 100 OOD sequences), server stop/overload and latency on a shorter
          window (T = 30, about 270 events) with a Hawkes MLE and a neural TPP fitted on 100
          sequences, FPR over 1,000 calibration/test splits (400 / 100 sequences) per setting
          at α ∈ {0.01, 0.05, 0.1}. The README's numbers (sized for a shared 2-core CPU).
  paper   the paper's scale: η grid of 20 points, 10 seeds, 1,000 ID and OOD sequences,
          neural TPP trained on 500 sequences for longer (accelerator; not run here).
  official the official experiments/spp.py set-up, SPP part only (it trains nothing): its
          nine families (with its comb `uniform_official` and capped
          `inhomogeneous_official`), η ∈ {0, 0.05, …, 0.95} (20 values), 1,000 calibration,
          1,000 ID test and 1,000 OOD sequences per η, 3 seeds, every baseline (KS, 3S, χ²,
          Q±). Hawkes at η = 0.95 had more than 2,048 events in one window of
          1,000 (measured), so that family gets 3,072 slots.
"""
from lib.cades.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)
from lib.cades.config_schema import OFFICIAL_SPP_FAMILIES
from lib.common.config import variant_config

VARIANTS = ("tiny", "quick", "paper", "official")


def _etas(n):
    """η = 0, 0.05, ... (n values)."""
    return tuple(round(0.05 * i, 2) for i in range(n))


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "cades_tiny", "mesh.data": 1, "spp.families": ("self_correcting",), "spp.max_len": 256,
             "spp.max_len_hawkes": 256, "spp.etas": (0.0, 0.8), "spp.n_cal": 40,
             "spp.n_test": 24, "spp.num_seeds": 2, "multivariate.scenarios": ("server_stop",),
             "multivariate.t_max": 10.0, "multivariate.max_len": 256,
             "multivariate.etas": (0.0, 1.0), "multivariate.n_train": 16,
             "multivariate.n_cal": 24, "multivariate.n_test": 16, "multivariate.num_seeds": 2,
             "hawkes.num_steps": 20, "neural.hidden": 8, "neural.batch_size": 8,
             "fpr.settings": ("server",), "fpr.n_cal": 40, "fpr.n_test": 10,
             "fpr.num_blocks": 4, "fpr.reps_per_block": 5, "fpr.block_size": 60,
             "eval.chunk": 64, "train.num_steps": 10}),
        "quick": lambda: config({"tag": "cades_quick"}),
        "paper": lambda: config(
            {"tag": "cades_paper", "spp.max_len": 1024, "spp.max_len_hawkes": 1024,
             "spp.etas": _etas(19), "spp.n_cal": 500, "spp.n_test": 1000, "spp.num_seeds": 10,
             "multivariate.t_max": 100.0, "multivariate.max_len": 1280,
             "multivariate.etas": _etas(21), "multivariate.n_train": 500,
             "multivariate.n_cal": 500, "multivariate.n_test": 1000,
             "multivariate.num_seeds": 5, "hawkes.num_steps": 1000, "neural.hidden": 64,
             "neural.batch_size": 64, "fpr.n_cal": 500, "fpr.n_test": 500,
             "fpr.num_blocks": 1000, "fpr.reps_per_block": 1, "fpr.block_size": 1000,
             "train.num_steps": 5000}),
        "official": lambda: config(
            {"tag": "cades_official", "parts": ("spp",), "spp.families": OFFICIAL_SPP_FAMILIES,
             # Hawkes at η = 0.95 overflowed 2,048 slots in one window of 1,000 (measured)
             "spp.max_len_hawkes": 3072, "spp.etas": _etas(20), "spp.n_cal": 1000,
             "spp.n_test": 1000, "fpr.settings": ("spp",)}),
    }, arg, default="quick")
