"""GMFlow: checkerboard / Gaussian-grid toys and class-conditional digits (defaults and rules
of every key: lib/gmflow/config_schema.py `KEYS`; a variant states only what differs).

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
from lib.common.config import variant_config
from lib.gmflow.config_schema import config, validate  # noqa: F401  (validate: the config test)

VARIANTS = ("tiny", "quick", "paper", "seeds", "fashion")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "gmflow_tiny", "digits.batch_size": 32, "digits.cfg_scales": (1.0, 3.0),
             "digits.classifier_steps": 20, "digits.components": 2, "digits.depth": 1,
             "digits.nfes": (2,), "digits.pg_scales": (0.0, 0.5), "digits.samples_per_class": 5,
             "digits.substep_budget": 4, "digits.width": 32, "optim.ema_decay": 0.9,
             "optim.warmup": 5, "toy.batch_size": 64, "toy.components": (4,),
             "toy.coord_embed_dim": 16, "toy.datasets": ("checkerboard",), "toy.depth": 1,
             "toy.grid_components": (), "toy.mmd_samples": 100, "toy.nfes": (1, 2),
             "toy.num_samples": 200, "toy.plot_samples": 100, "toy.substep_budget": 8,
             "toy.swd_projections": 32, "toy.width": 32, "train.checkpoint_every": 10,
             "train.log_every": 10, "train.num_steps": 30}),
        "quick": lambda: config(
            {"tag": "gmflow_quick", "toy.datasets": ("checkerboard",), "train.num_steps": 2000}),
        "paper": lambda: config(
            {"tag": "gmflow_paper", "digits.batch_size": 1024, "digits.classifier_steps": 5000,
             "digits.depth": 4, "digits.samples_per_class": 500, "digits.width": 1024,
             "optim.ema_decay": 0.9999, "optim.lr": 0.0002, "optim.warmup": 1000,
             "toy.batch_size": 4096, "toy.components": (1, 2, 8, 64), "toy.coord_embed_dim": 128,
             "toy.depth": 5, "toy.mmd_samples": 5000, "toy.num_samples": 100_000,
             "toy.width": 512, "train.checkpoint_every": 10_000, "train.log_every": 1000,
             "train.num_steps": 200_000}),
        "seeds": lambda: config(
            {"tag": "gmflow_seeds", "digits.cfg_scales": (1.0, 1.25, 1.5, 1.75, 2.0),
             "digits.methods": ("pg", "cfg"), "digits.pg_scales": (0.0, 0.1, 0.15, 0.2, 0.3),
             "digits.seeds": (0, 1, 2), "parts": ("digits",), "train.num_steps": 2000}),
        "fashion": lambda: config(
            {"tag": "gmflow_fashion", "digits.batch_size": 64,
             "digits.cfg_scales": (1.0, 1.5, 2.0, 3.0), "digits.dataset": "fashion_mnist",
             "digits.downsample": 2, "digits.methods": ("pg", "cfg"), "digits.network": "unet",
             "digits.nfes": (4, 8, 16), "digits.pg_scales": (0.0, 0.15, 0.3, 0.45),
             "digits.real_samples": 2000, "digits.samples_per_class": 50,
             "digits.test_fraction": 1 / 7, "digits.unet_features": (16, 32),
             "parts": ("digits",), "train.num_steps": 1500}),
    }, arg, default="quick")
