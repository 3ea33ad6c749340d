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
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.kar_peak.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "quick_colour", "paper")
BASELINES = ("relu_pe", "rff", "siren", "finer")


def _build(*, tag, images, size, masks, methods, width, depth, steps, colour=False,
           reg_steps=400, reg_n_train=24, reg_n_test=128, reg_draws=4, reg_methods=None,
           ntk_points=256, rank=100, features=64):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.parts = ("images", "regression")
    c.train = train_block(steps, log_every=max(1, steps // 20), checkpoint_every=max(1, steps // 4))
    c.mesh = mesh_block()
    c.data = dict(images=tuple(images), size=size, colour=colour, texture_crop=0.25,
                  masks=tuple(masks), random_fraction=0.5, patch_fraction=0.25,
                  patch_size=max(2, size // 8), mask_seed=0)
    c.methods = tuple(methods)
    c.inr = dict(width=width, depth=depth, pe_levels=6, rff_features=features, rff_sigma=1.0,
                 siren_omega0=30.0, finer_omega0=30.0, finer_bias_scale=1.0,
                 peak_features=features, peak_sigma=1.0, peak_order=1,
                 peak_learn_frequencies=True, seed=0)
    c.kar = dict(form="grid", residual="squared", weight=0.1, rank=rank, att_width=64,
                 att_levels=6, ntk_chunk=32)
    c.optim = dict(lr=1e-3, lr_sine=1e-4, att_lr=1e-3)
    c.eval = dict(ntk_points=ntk_points, ntk_chunk=32, plots=True)
    c.regression = dict(methods=tuple(reg_methods or ("rff", "rff+kar", "peak", "peak+kar")),
                        num_steps=reg_steps, n_train=reg_n_train, n_test=reg_n_test,
                        num_draws=reg_draws, max_freq=24, centre=10.0, width=2.0, noise=1e-3,
                        seed=0, kar_weight=1.0, kar_points=32, rff_sigma=3.0, peak_sigma=3.0)
    return c


def get_config(arg=None):
    def tiny():
        c = _build(tag="kar_peak_tiny", images=("camera",), size=16, masks=("random", "patch"),
                   methods=("rff", "peak+kar"), width=16, depth=2, steps=40, reg_steps=30,
                   reg_n_train=8, reg_n_test=32, reg_draws=2, reg_methods=("rff", "peak+kar"),
                   ntk_points=16, rank=8, features=8)
        c.regression.kar_points = 16
        c.train.checkpoint_every = 20
        return c

    quick_methods = ("relu_pe", "rff", "siren", "peak", "peak+kar")   # FINER, RFF+KAR: --config.methods
    return variant_config({
        "tiny": tiny,
        "quick": lambda: _build(tag="kar_peak_quick", images=("camera", "brick", "grass"), size=64,
                                masks=("random", "patch", "textural"), methods=quick_methods,
                                width=64, depth=3, steps=300),
        "quick_colour": lambda: _build(tag="kar_peak_quick_colour", colour=True,
                                       images=("astronaut", "coffee", "chelsea"), size=64,
                                       masks=("random", "patch", "textural"),
                                       methods=("siren", "rff", "peak+kar"), width=64, depth=3,
                                       steps=300),
        "paper": lambda: _build(tag="kar_peak_paper",
                                images=("camera", "moon", "coins", "brick", "grass", "gravel"),
                                size=128, masks=("random", "patch", "textural"),
                                methods=BASELINES + ("rff+kar", "peak", "peak+kar"), width=256,
                                depth=4, steps=3000,
                                reg_steps=5000, reg_n_train=64, reg_n_test=512, reg_draws=32,
                                ntk_points=1024, features=256),
    }, arg, default="quick")
