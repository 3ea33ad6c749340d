"""GMFlow: checkerboard / Gaussian-grid toys and class-conditional digits.

    python experiments/gmflow/main.py --config=configs/gmflow/gmflow.py:quick \
        --workdir=workdirs/gmflow_quick

Variants:
  tiny    seconds: a checkerboard GMFlow (K = 4) and a flow-matching MLP of width 32,
          30 steps, 2 NFEs, 200 samples; digits with K = 2, 5 samples per class (tests).
  quick   the README's numbers on 2 shared CPU cores: MLPs of width 256 × 3 hidden layers,
          `train.num_steps` = 2000 Adam steps per model (batch 1024 toys / 256 digits):
          checkerboard K ∈ {1, 8, 64} + flow matching, NFE ∈ {1, 2, 4, 8, 16, 32}, 4000
          samples (add the Gaussian grid, K = 8 + flow matching, with
          --config.toy.datasets="('checkerboard','gaussian_grid')"); digits K = 8 vs flow matching,
          probabilistic guidance w̃ ∈ {0 … 0.75} vs CFG w ∈ {1 … 5} at NFE 4, 8, 32.
  seeds   the digits part alone over 3 seeds (training and sampling), with a finer guidance
          sweep around both optima (w̃ ∈ {0, 0.1, 0.15, 0.2, 0.3}, w ∈ {1, 1.25, 1.5, 1.75, 2}),
          probabilistic guidance vs CFG: mean ± SE.
  fashion class-conditional Fashion-MNIST downsampled to 14×14 (2×2 average pooling) with
          convolutional denoisers (`GMFlowUNet`, features (16, 32)), 1500 steps of batch 64,
          NFE 4, 8, 16, 50 samples per class against 2000 real images.
  paper   the paper's toy scale (width 512 × 5 layers, batch 4096, 200k steps,
          10⁵ samples; checkerboard and Gaussian grid) for an accelerator; not run here.
"""
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.gmflow.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper", "seeds", "fashion")


def _build(tag, *, steps, toy, digits, parts=("toy", "digits"), lr=1e-3, warmup=200,
           ema=0.995, log_every=100, checkpoint_every=500):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = tuple(parts)
    c.train = train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.mesh = mesh_block()
    c.optim = dict(lr=lr, warmup_steps=warmup, ema_decay=ema)
    base_toy = dict(datasets=("checkerboard", "gaussian_grid"), components=(1, 8, 64),
                    grid_components=(8,), fm_baseline=True, loss="gm_transition",
                    trans_ratio=0.9, width=256, depth=3, coord_embed_dim=64, batch_size=1024,
                    nfes=(1, 2, 4, 8, 16, 32), gm_solvers=("gm_sde", "gm_sde2", "gm_ode", "gm_ode2"),
                    fm_solvers=("euler", "heun", "ddpm"), substep_budget=128, num_samples=4000,
                    mmd_samples=1000, swd_projections=256, plot_samples=2000)
    base_digits = dict(dataset="digits", path="/usr/share/datasets/fashion-mnist", components=8,
                       network="mlp", unet_features=(32, 64), downsample=1, real_samples=0,
                       methods=("pg", "cfg", "cfg_gm"), seeds=(0,), loss="gm_transition", trans_ratio=0.5, width=256, depth=3, batch_size=256,
                       p_uncond=0.1, nfes=(4, 8, 32), gm_solver="gm_ode2", fm_solver="euler",
                       substep_budget=128, pg_scales=(0.0, 0.15, 0.3, 0.45, 0.6, 0.75),
                       cfg_scales=(1.0, 1.5, 2.0, 3.0, 4.0, 5.0), orthogonal=1.0,
                       samples_per_class=100, test_fraction=0.25, classifier_steps=1500, knn_k=3)
    base_toy.update(toy)
    base_digits.update(digits)
    c.toy = base_toy
    c.digits = base_digits
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            "gmflow_tiny", steps=30, log_every=10, checkpoint_every=10, warmup=5, ema=0.9,
            toy=dict(datasets=("checkerboard",), components=(4,), grid_components=(), width=32,
                     depth=1, coord_embed_dim=16, batch_size=64, nfes=(1, 2), num_samples=200,
                     mmd_samples=100, swd_projections=32, plot_samples=100, substep_budget=8),
            digits=dict(components=2, width=32, depth=1, batch_size=32, nfes=(2,),
                        pg_scales=(0.0, 0.5), cfg_scales=(1.0, 3.0), samples_per_class=5,
                        classifier_steps=20, substep_budget=4)),
        "quick": lambda: _build("gmflow_quick", steps=2000, toy=dict(datasets=("checkerboard",)),
                                 digits={}),
        "seeds": lambda: _build(
            "gmflow_seeds", steps=2000, parts=("digits",), toy={},
            digits=dict(seeds=(0, 1, 2), methods=("pg", "cfg"),
                        pg_scales=(0.0, 0.1, 0.15, 0.2, 0.3),
                        cfg_scales=(1.0, 1.25, 1.5, 1.75, 2.0))),
        "fashion": lambda: _build(
            "gmflow_fashion", steps=1500, parts=("digits",), toy={},
            digits=dict(dataset="fashion_mnist", network="unet", unet_features=(16, 32),
                        downsample=2, real_samples=2000, samples_per_class=50, batch_size=64,
                        nfes=(4, 8, 16), methods=("pg", "cfg"), pg_scales=(0.0, 0.15, 0.3, 0.45),
                        cfg_scales=(1.0, 1.5, 2.0, 3.0), test_fraction=1 / 7)),
        "paper": lambda: _build(
            "gmflow_paper", steps=200_000, lr=2e-4, warmup=1000, ema=0.9999,
            log_every=1000, checkpoint_every=10_000,
            toy=dict(components=(1, 2, 8, 64), width=512, depth=5, coord_embed_dim=128,
                     batch_size=4096, num_samples=100_000, mmd_samples=5000),
            digits=dict(width=1024, depth=4, batch_size=1024, samples_per_class=500,
                        classifier_steps=5000)),
    }, arg, default="quick")
