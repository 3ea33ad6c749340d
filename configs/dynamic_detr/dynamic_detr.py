"""Dynamic token aggregation vs dense / top-k / focus DETR encoders on rendered shapes.

    python experiments/dynamic_detr/main.py --config=configs/dynamic_detr/dynamic_detr.py:quick \
        --workdir=workdirs/dynamic_detr_quick

Variants:
  tiny    32×32 images, 2 levels, d = 8, 1+1 layers, 3 queries, batch 2, 2 + 1 steps; dense,
          top-k and dynamic at one budget, one ablation (tests; compiles dominate, the numbers
          mean nothing).
  quick   32×32 images with 1–3 objects of 4 classes, 3 levels at strides 4/8/16 (N = 64 +
          16 + 4 = 84 tokens), d = 48, 3 encoder + 3 decoder layers, 16 queries; 1,000 dense
          pre-training steps, then 60 fine-tuning steps per variant; budgets 0.25 / 0.5 and
          four ablations at 0.25 (about an hour on a shared 2-core CPU). The README's first
          table (measured with `sparse.holistic = "kept"`); too short to judge the targets
          (dense AP 0.03).
  cpu_long  the CPU regime in which the targets are judged: quick's images and model, with
          dense pre-training 8× longer (8,000 steps, cosine from 10⁻³) and fine-tunes 5×
          longer (300 steps each, all from the one pre-trained checkpoint), the in-graph
          matcher (`loss.matcher = "jax"`, 25 % faster here than the scipy callback), all
          five ablations, the "kept" holistic design as one more row
          (`sparse.compare_holistic_kept`), and 500 validation images. About 1.5 hours on
          the shared 2-core CPU.
  gpu     the run on a 7-minute H200 lease: 64×64 images with 1–8 objects of 6 classes, 3
          levels (N = 256 + 64 + 16 = 336 tokens), d = 96, 3+3 layers, 30 queries, batch 32;
          a 340 s wall-clock budget (run.time_budget_s): 35 % to dense pre-training (at most
          20,000 steps, constant learning rate after warm-up), the rest split evenly over
          the 12 fine-tunes (dense; top-k / focus / dynamic at 0.25 and 0.5; five ablations
          at 0.25; at most 4,000 steps each, at a 5× lower rate), each stopping at the step
          its share runs out (compilation and evaluation included in the share). The
          in-graph matcher and `run.precompile` (every fine-tune's step compiled in a
          background thread during pre-training) are on; neither has run on a GPU.
  paper   COCO-scale shape for an accelerator (not run here): 512×512 rendered images
          standing in for COCO (swap in lib/detection/coco.py's loader), 4 levels, d = 256,
          6+6 layers, 300 queries, budgets 0.1–0.5.
"""
from lib.common.config import variant_config
from lib.dynamic_detr.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "cpu_long", "gpu", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "dynamic_detr_tiny", "mesh.data": 1, "train.num_steps": 2, "train.log_every": 1,
             "train.checkpoint_every": 2, "data.num_classes": 3, "data.min_scale": 6,
             "data.max_scale": 14, "data.batch_size": 2, "data.val_images": 4,
             "model.widths": (8, 8), "model.dim": 8, "model.heads": 1, "model.enc_layers": 1,
             "model.dec_layers": 1, "model.num_queries": 3, "optim.lr": 5e-4,
             "optim.warmup": 1, "optim.finetune.warmup": 1, "sparse.finetune_steps": 1,
             "sparse.methods": ("topk", "dynamic"), "sparse.budgets": (0.5,),
             "sparse.ablations": ("no_proximal",), "sparse.ablation_budget": 0.5,
             "sparse.cascade": (1.0,), "sparse.focus_level_weights": (1.0, 2.0),
             "eval.batch_size": 8, "eval.throughput_batch": 2, "eval.throughput_repeats": 1}),
        "quick": lambda: config(
            {"tag": "dynamic_detr_quick", "train.num_steps": 1000, "train.log_every": 25,
             "train.checkpoint_every": 250, "data.val_images": 200, "optim.warmup": 100,
             "optim.finetune.warmup": 100, "sparse.finetune_steps": 60,
             "sparse.ablations": ("no_density", "no_proximal", "no_holistic",
                                  "no_center_distance"),
             "eval.batch_size": 64}),
        "cpu_long": lambda: config(
            {"tag": "dynamic_detr_cpu_long", "train.num_steps": 8000, "loss.matcher": "jax",
             "optim.warmup": 200, "optim.finetune.warmup": 200, "sparse.finetune_steps": 300,
             "sparse.compare_holistic_kept": True}),
        "gpu": lambda: config(
            {"tag": "dynamic_detr_gpu", "train.num_steps": 20_000, "data.image_size": 64,
             "data.num_classes": 6, "data.max_objects": 8, "data.min_scale": 6,
             "data.max_scale": 32, "data.batch_size": 32, "data.workers": 8,
             "model.widths": (32, 64, 96), "model.dim": 96, "model.num_queries": 30,
             "loss.matcher": "jax", "optim.lr": 5e-4, "optim.finetune.lr": 1e-4,
             "optim.warmup": 300, "optim.finetune.warmup": 50, "optim.schedule": "constant",
             "run.time_budget_s": 340.0, "run.pretrain_fraction": 0.35,
             "run.eval_reserve_s": 15.0, "run.precompile": True, "sparse.finetune_steps": 4000,
             "eval.area_scale": (64 / 256) ** 2, "eval.throughput_batch": 64,
             "eval.throughput_repeats": 10}),
        "paper": lambda: config(
            {"tag": "dynamic_detr_paper", "train.num_steps": 150_000,
             "train.checkpoint_every": 2000, "data.image_size": 512, "data.num_classes": 6,
             "data.max_objects": 30, "data.min_scale": 8, "data.max_scale": 256,
             "data.batch_size": 32, "data.val_images": 5000,
             "model.widths": (128, 256, 512, 1024), "model.dim": 256, "model.heads": 8,
             "model.enc_layers": 6, "model.dec_layers": 6, "model.num_queries": 300,
             "optim.lr": 2e-4, "optim.finetune.lr": 1e-4, "optim.warmup": 1000,
             "optim.finetune.warmup": 1000, "sparse.finetune_steps": 30_000,
             "sparse.budgets": (0.1, 0.2, 0.3, 0.5), "sparse.ablation_budget": 0.2,
             "sparse.cascade": (1.5, 1.3, 1.1, 0.9, 0.7, 0.5),
             "sparse.focus_level_weights": (1.0, 1.25, 1.5, 2.0), "sparse.fine_levels": 2,
             "eval.batch_size": 32, "eval.area_scale": (512 / 256) ** 2,
             "eval.throughput_batch": 16,
             "eval.throughput_repeats": 20}),
    }, arg, default="quick")
