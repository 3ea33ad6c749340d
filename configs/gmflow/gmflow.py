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
  official  the official code's checkerboard recipe (Lakonik/GMFlow,
          configs/gmflow_checkerboard_k64.py; `OFFICIAL`): 5 Linear + SiLU layers of width 512
          (`toy.depth` 4 counts the layers after the input projection), 128 sin-cos features
          per coordinate, batch 4096, 200k AdamW steps (lr 2e-4, β₂ 0.999, no weight decay,
          no clipping), a linear warm-up from lr/1000 over 1000 steps then lr held, the
          Karras power-function EMA with γ = 7; transition loss (λ 0.9), uniform t.
          Checkerboard only, K ∈ {1, 8, 64} + flow matching on that recipe, 10⁵ samples.
          The network is the workspace's `GMFlowMLP`, whose time path and log-std head differ
          from the official denoiser's (README, deviations).
          For an accelerator; not run here. Cost: per model 200k steps × 4096 points through
          a 1.8M (flow matching) to 1.9M (K = 64) parameter MLP, ≈ 6 FLOP per parameter and
          point, ≈ 9·10¹⁵ FLOP; 4 models ≈ 3.6·10¹⁶. One CPU core of this machine takes
          1.35–1.57 s per step (3.1–3.6 days per model); on one H100 the FLOP count gives an
          estimated well under an hour per model (not measured).
  paper   the paper's scope at the official toy recipe: `official`'s training for the
          checkerboard (K ∈ {1, 2, 8, 64}) and the Gaussian grid, and the digits at width
          1024 × 4, batch 1024, on the same optimiser and EMA; for an accelerator; not run here.
"""
from lib.common.config import variant_config
from lib.gmflow.config_schema import config, validate  # noqa: F401  (validate: the config test)

VARIANTS = ("tiny", "quick", "official", "paper", "seeds", "fashion")

# The training recipe of the official checkerboard config (configs/gmflow_checkerboard_k64.py:
# AdamW lr 2e-4, weight_decay 0; lr_config policy 'fixed', linear warm-up of 1000 iterations
# from ratio 0.001; batch 4096; 200k iterations; ExponentialMovingAverageHookMod with
# momentum_policy 'karras', gamma 7; no grad_clip in train_cfg) and of its denoiser
# (lib/models/architecture/toymodels.py GMFlowMLP2DDenoiser: hidden_dim 512, num_layers 5,
# a 256-channel position embedding = 128 per coordinate).
OFFICIAL = {"optim.b2": 0.999, "optim.clip": 0.0, "optim.ema_gamma": 7.0,
            "optim.ema_kind": "karras", "optim.lr": 0.0002, "optim.schedule": "constant",
            "optim.warmup": 1000, "optim.warmup_from": 0.001, "toy.batch_size": 4096,
            "toy.coord_embed_dim": 128, "toy.depth": 4, "toy.width": 512,
            "train.checkpoint_every": 10_000, "train.log_every": 1000,
            "train.num_steps": 200_000}


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "gmflow_tiny", "mesh.data": 1, "digits.batch_size": 32, "digits.cfg_scales": (1.0, 3.0),
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
        "official": lambda: config(
            {**OFFICIAL, "tag": "gmflow_official", "parts": ("toy",),
             "toy.datasets": ("checkerboard",), "toy.mmd_samples": 5000,
             "toy.num_samples": 100_000}),
        "paper": lambda: config(
            {**OFFICIAL, "tag": "gmflow_paper", "digits.batch_size": 1024,
             "digits.classifier_steps": 5000, "digits.depth": 4, "digits.samples_per_class": 500,
             "digits.width": 1024, "toy.components": (1, 2, 8, 64), "toy.mmd_samples": 5000,
             "toy.num_samples": 100_000}),
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
