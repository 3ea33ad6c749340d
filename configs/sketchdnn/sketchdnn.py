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
          steps (what 3 seeds x 3 models fit in ~45 min on the shared CPUs), the metrics of 250
          samples also recorded at OFFICIAL_CURVE_STEPS and at the end. Seeds:
          `--config.train.seed=N` (model init and batches; data, encoder and sampling keys
          stay those of `seed`), one workdir each; tools/sketchdnn_seeds.py tabulates them.
  paper   the paper's scale for accelerators (not run here): 16 slots, 7..16 primitives,
          T = 2000, 32 blocks of width 512 with 8 heads (~135 M parameters), batch 128,
          the official training and sampler settings (as `official`), 2,000-step ancestral
          sampling, 10,000 samples.
          Point `data.source`/`data.sketchgraphs_path` at SketchGraphs' sg_t16 file to use
          the real data set.
"""
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.sketchdnn.config_schema import validate  # noqa: F401  (used by the config test)
from lib.sketchdnn.generator import FAMILIES

VARIANTS = ("tiny", "quick", "official", "paper")
OFFICIAL_STEPS = 1500
OFFICIAL_CURVE_STEPS = (500, 1000)
ALL_RUNS = ("gaussian_softmax", "onehot_gaussian", "d3pm", "gaussian_softmax_pe")
OFFICIAL_RUNS = ("gaussian_softmax", "d3pm", "onehot_gaussian")   # the model and its baselines


def _build(tag, *, steps, data, diffusion, model, optim, evaluation, loss=None,
           runs=ALL_RUNS, log_every=100, checkpoint_every=500):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.runs = tuple(runs)
    c.train = train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.mesh = mesh_block()
    c.data = dict(source="generator", sketchgraphs_path="", num_slots=12, min_primitives=4,
                  max_primitives=12, families=tuple(FAMILIES), num_train=20_000, num_test=1000)
    c.data.update(data)
    c.diffusion = dict(num_steps=200, low_t_max=15, low_t_weight=16.0, sample_steps=100,
                       nll_bins=256, x0_logits="embedding_mean")
    c.diffusion.update(diffusion)
    c.loss = dict(ce_mean="slots")
    c.loss.update(loss or {})
    c.model = dict(width=64, depth=3, heads=4, mlp_ratio=4)
    c.model.update(model)
    c.optim = dict(lr=1e-3, warmup_steps=100, schedule="cosine", grad_clip=1.0, ema_decay=0.999, batch_size=64)
    c.optim.update(optim)
    c.eval = dict(num_samples=1000, sample_batch=500, nll_repeats=4, knn_k=3, raster_res=32,
                  encoder_steps=1500, encoder_batch=128, grid_samples=24, endpoint_eps=0.02,
                  plot=True, curve_steps=(), curve_samples=0)
    c.eval.update(evaluation)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            "sketchdnn_tiny", steps=4, log_every=2, checkpoint_every=4,
            data=dict(num_slots=6, min_primitives=4, max_primitives=6,
                      families=("rectangle", "slot", "arch"), num_train=64, num_test=16),
            diffusion=dict(num_steps=40, low_t_max=3, sample_steps=4),
            model=dict(width=16, depth=1, heads=2, mlp_ratio=2),
            optim=dict(warmup_steps=1, batch_size=16, ema_decay=0.5),
            evaluation=dict(num_samples=16, sample_batch=16, nll_repeats=1, raster_res=16,
                            encoder_steps=3, encoder_batch=16, grid_samples=4, plot=False)),
        "quick": lambda: _build("sketchdnn_quick", steps=3000, data={}, diffusion={},
                                 model={}, optim={}, evaluation={}),
        "official": lambda: _build(
            "sketchdnn_official", steps=OFFICIAL_STEPS, data={}, runs=OFFICIAL_RUNS,
            diffusion=dict(x0_logits="two_log_p"), model={},
            optim=dict(lr=1e-4, warmup_steps=0, schedule="constant", grad_clip=0.0,
                       ema_decay=0.0),
            loss=dict(ce_mean="slots_and_classes"),
            evaluation=dict(curve_steps=OFFICIAL_CURVE_STEPS, curve_samples=250)),
        "paper": lambda: _build(
            "sketchdnn_paper", steps=1_000_000, log_every=1000, checkpoint_every=20_000,
            data=dict(num_slots=16, min_primitives=7, max_primitives=16,
                      num_train=1_000_000, num_test=50_000),
            diffusion=dict(num_steps=2000, low_t_max=150, sample_steps=2000,
                           x0_logits="two_log_p"),
            model=dict(width=512, depth=32, heads=8, mlp_ratio=4),
            optim=dict(lr=1e-4, warmup_steps=0, schedule="constant", grad_clip=0.0,
                       ema_decay=0.0, batch_size=128),
            loss=dict(ce_mean="slots_and_classes"),
            evaluation=dict(num_samples=10_000, sample_batch=1000, nll_repeats=1,
                            encoder_steps=20_000, encoder_batch=512, raster_res=64)),
    }, arg, default="quick")
