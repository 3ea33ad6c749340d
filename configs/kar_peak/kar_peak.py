"""KAR and PEAK: kernel alignment for implicit neural representations (Li et al., ICML 2025).

    python experiments/kar_peak/main.py --config=configs/kar_peak/kar_peak.py:quick \
        --workdir=workdirs/kar_peak_quick

Variants:
  tiny          16² camera, two masks, rff vs peak+kar, 40 steps; 1-D demo with 8 points
                (tests; seconds).
  quick         64² grey camera + brick + grass, random 50 % / patch 25 % / textural masks,
                relu_pe, rff, siren, peak, peak+kar; width 64, depth 3, 300 full-batch steps;
                the 1-D alignment demo with 4 draws. The README's numbers (CPU, ~30 minutes on
                a loaded 2-core machine). Add FINER / RFF+KAR with
                --config.methods="('relu_pe','rff','siren','finer','rff+kar','peak','peak+kar')".
  quick_colour  the same at 64² on colour astronaut / coffee / chelsea.
  paper         128², all 7 methods, width 256, depth 4, 3000 steps (accelerator; not run here).
Override e.g. --config.methods="('siren','peak+kar')" --config.kar.weight=1.0.
"""
from lib.common.config import variant_config
from lib.kar_peak.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "quick_colour", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "kar_peak_tiny", "mesh.data": 1, "train.num_steps": 40, "train.log_every": 2,
             "train.checkpoint_every": 20, "data.images": ("camera",), "data.size": 16,
             "data.masks": ("random", "patch"), "data.patch_size": 2,
             "methods": ("rff", "peak+kar"), "inr.width": 16, "inr.depth": 2,
             "inr.rff_features": 8, "inr.peak_features": 8, "kar.rank": 8, "eval.ntk_points": 16,
             "regression.methods": ("rff", "peak+kar"), "regression.num_steps": 30,
             "regression.n_train": 8, "regression.n_test": 32, "regression.num_draws": 2,
             "regression.kar_points": 16}),
        "quick": lambda: config(
            {"tag": "kar_peak_quick", "train.num_steps": 300,
             "data.images": ("camera", "brick", "grass"),
             # FINER, RFF+KAR: add with --config.methods
             "methods": ("relu_pe", "rff", "siren", "peak", "peak+kar")}),
        "quick_colour": lambda: config(
            {"tag": "kar_peak_quick_colour", "train.num_steps": 300,
             "data.images": ("astronaut", "coffee", "chelsea"), "data.colour": True,
             "methods": ("siren", "rff", "peak+kar")}),
        "paper": lambda: config(
            {"tag": "kar_peak_paper", "train.num_steps": 3000, "train.log_every": 150,
             "train.checkpoint_every": 750,
             "data.images": ("camera", "moon", "coins", "brick", "grass", "gravel"),
             "data.size": 128, "data.patch_size": 16,
             "methods": ("relu_pe", "rff", "siren", "finer", "rff+kar", "peak", "peak+kar"),
             "inr.width": 256, "inr.depth": 4, "inr.rff_features": 256, "inr.peak_features": 256,
             "eval.ntk_points": 1024, "regression.num_steps": 5000, "regression.n_train": 64,
             "regression.n_test": 512, "regression.num_draws": 32}),
    }, arg, default="quick")
