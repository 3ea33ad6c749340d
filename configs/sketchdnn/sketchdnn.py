"""SketchDNN: Gaussian-Softmax diffusion vs one-hot Gaussian / D3PM labels, ± positional encoding.

    python experiments/sketchdnn/main.py --config=configs/sketchdnn/sketchdnn.py:quick \
        --workdir=workdirs/sketchdnn_quick

Variants:
  tiny    seconds (tests): 6 slots, 40 steps of diffusion, a 1-block width-16 denoiser,
          a few training steps, 16 samples.
  quick   the README's numbers on 2 shared CPU cores: procedural sketches with 4..12
          primitives in 12 slots (20,000 train / 1,000 test), T = 200, a 3-block width-64
          denoiser (~0.2 M parameters), `train.num_steps` Adam steps per model (batch 64),
          100 sampling steps, 1,000 samples per model; runs Gaussian-Softmax, one-hot
          Gaussian, D3PM and Gaussian-Softmax + positional encoding.
  official  quick's data, T and denoiser with the official code's training and sampler
          (Sathware/SketchDNN): cross-entropy averaged over classes as well as slots
          (`loss.ce_mean`), Adam 1e-4 constant without clipping, warm-up or EMA, and the
          reverse step's x̂₀ logits 2·log p̂ (`diffusion.x0_logits`); trained OFFICIAL_STEPS
          steps (Gaussian-Softmax's 250-sample FD is flat from step 1,500 on, within one seed
          std; ~10 min a seed on an idle 2-core CPU), the metrics of 250 samples also
          recorded at OFFICIAL_CURVE_STEPS and at the end. Seeds:
          `--config.train.seed=N` (model init and batches; data, encoder and sampling keys
          stay those of `seed`), one workdir each; tools/sketchdnn_seeds.py tabulates them.
  paper   the paper's scale for accelerators (not run here): 16 slots, 7..16 primitives,
          T = 2000, 32 blocks of width 512 with 8 heads (~135 M parameters), batch 128,
          the official training and sampler settings (as `official`), 2,000-step ancestral
          sampling, 10,000 samples.
          Point `data.source`/`data.sketchgraphs_path` at SketchGraphs' sg_t16 file to use
          the real data set.
"""
from lib.common.config import variant_config
from lib.sketchdnn.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "official", "paper")
OFFICIAL_STEPS = 6000
OFFICIAL_CURVE_STEPS = (500, 1000, 1500, 3000, 4500)
OFFICIAL_RUNS = ("gaussian_softmax", "d3pm", "onehot_gaussian")   # the model and its baselines
# the official code's training and sampler (official and paper)
OFFICIAL_TRAINING = {"loss.ce_mean": "slots_and_classes", "optim.lr": 1e-4,
                     "optim.warmup": 0, "optim.schedule": "constant",
                     "optim.clip": 0.0, "optim.ema_decay": 0.0,
                     "diffusion.x0_logits": "two_log_p"}


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "sketchdnn_tiny", "mesh.data": 1, "train.num_steps": 4, "train.log_every": 2,
             "train.checkpoint_every": 4, "data.num_slots": 6, "data.min_primitives": 4,
             "data.max_primitives": 6, "data.families": ("rectangle", "slot", "arch"),
             "data.num_train": 64, "data.num_test": 16, "diffusion.num_steps": 40,
             "diffusion.low_t_max": 3, "diffusion.sample_steps": 4, "model.width": 16,
             "model.depth": 1, "model.heads": 2, "model.mlp_ratio": 2,
             "optim.warmup": 1, "optim.batch_size": 16, "optim.ema_decay": 0.5,
             "eval.num_samples": 16, "eval.sample_batch": 16, "eval.nll_repeats": 1,
             "eval.raster_res": 16, "eval.encoder_steps": 3, "eval.encoder_batch": 16,
             "eval.grid_samples": 4, "eval.plot": False}),
        "quick": lambda: config({"tag": "sketchdnn_quick"}),
        "official": lambda: config(
            {"tag": "sketchdnn_official", "train.num_steps": OFFICIAL_STEPS,
             "runs": OFFICIAL_RUNS, **OFFICIAL_TRAINING,
             "eval.curve_steps": OFFICIAL_CURVE_STEPS, "eval.curve_samples": 250}),
        "paper": lambda: config(
            {"tag": "sketchdnn_paper", "train.num_steps": 1_000_000, "train.log_every": 1000,
             "train.checkpoint_every": 20_000, "data.num_slots": 16, "data.min_primitives": 7,
             "data.max_primitives": 16, "data.num_train": 1_000_000, "data.num_test": 50_000,
             "diffusion.num_steps": 2000, "diffusion.low_t_max": 150,
             "diffusion.sample_steps": 2000, "model.width": 512, "model.depth": 32,
             "model.heads": 8, **OFFICIAL_TRAINING, "optim.batch_size": 128,
             "eval.num_samples": 10_000, "eval.sample_batch": 1000, "eval.nll_repeats": 1,
             "eval.encoder_steps": 20_000, "eval.encoder_batch": 512, "eval.raster_res": 64}),
    }, arg, default="quick")
