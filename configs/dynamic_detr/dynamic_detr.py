"""Dynamic token aggregation vs dense / top-k / focus DETR encoders on rendered shapes.

    python experiments/dynamic_detr/main.py --config=configs/dynamic_detr/dynamic_detr.py:quick \
        --workdir=workdirs/dynamic_detr_quick

Variants:
  tiny    32×32 images, 2 levels, d = 8, 1+1 layers, 3 queries, batch 2, 2 + 1 steps; dense,
          top-k and dynamic at one budget, one ablation (tests; compiles dominate, the numbers
          mean nothing).
  quick   32×32 images with 1–3 objects of 4 classes, 3 levels at strides 4/8/16
          (N = 64 + 16 + 4 = 84 tokens), d = 48, 3 encoder + 3 decoder layers, 16 queries;
          1,000 dense pre-training steps, then 60 fine-tuning steps per variant; budgets
          0.25 / 0.5 and four ablations at 0.25 (about an hour on a shared 2-core CPU).
          The README's first table (measured with the earlier holistic design,
          `sparse.holistic = "kept"`); too short to judge the targets (dense AP 0.03).
  cpu_long  the CPU regime in which the targets are judged: quick's images and model, with
          dense pre-training 8× longer (8,000 steps, cosine from 10⁻³) and fine-tunes 5×
          longer (300 steps each, all from the one pre-trained checkpoint), the in-graph
          matcher (`loss.matcher = "jax"`, 25 % faster here than the scipy callback), all
          five ablations, the earlier holistic design as one more row
          (`sparse.compare_holistic_kept`), and 500 validation images. About 1.5 hours on the
          shared 2-core CPU.
  gpu     the run on a 7-minute H200 lease: 64×64 images with 1–8 objects of 6 classes,
          3 levels (N = 256 + 64 + 16 = 336 tokens), d = 96, 3+3 layers, 30 queries, batch 32;
          a 340 s wall-clock budget (run.time_budget_s): 35 % to dense pre-training (at most
          20,000 steps, constant learning rate after warm-up), the rest split evenly over the
          12 fine-tunes (dense; top-k / focus / dynamic at 0.25 and 0.5; five ablations at
          0.25; at most 4,000 steps each, at a 5× lower rate), each stopping at the step
          its share runs out (compilation and evaluation included in the share). Since the
          lease: the in-graph matcher and `run.precompile` (every fine-tune's step compiled
          in a background thread during pre-training; not yet run on a GPU).
  paper   COCO-scale shape for an accelerator (not run here): 512×512 rendered images
          standing in for COCO (swap in lib/detection/coco.py's loader), 4 levels, d = 256,
          6+6 layers, 300 queries, budgets 0.1–0.5.
"""
import ml_collections

from lib.common import config as config_lib
from lib.common.config import variant_config
from lib.dynamic_detr.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "cpu_long", "gpu", "paper")


def _build(*, tag, steps, finetune, image_size, num_classes, max_objects, scales, batch, val,
           widths, dim, heads, enc, dec, queries, budgets, ablation_budget, ablations, cascade,
           focus_w, fine_levels, methods=("topk", "focus", "dynamic"), lr=5e-4, ft_lr=2e-4,
           warmup=200, log_every=50, checkpoint_every=500, eval_batch=64, tp_batch=32, tp_reps=5,
           schedule="cosine", time_budget_s=None, pretrain_fraction=0.4, eval_reserve_s=20.0,
           keep_checkpoints=2, workers=0, ft_warmup=None, precompile=False, matcher="scipy"):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.train = config_lib.train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every,
                                     keep_checkpoints=keep_checkpoints)
    c.mesh = config_lib.mesh_block()
    c.data = dict(image_size=image_size, num_classes=num_classes, min_objects=1,
                  max_objects=max_objects, min_scale=scales[0], max_scale=scales[1],
                  batch_size=batch, val_images=val, workers=workers)
    c.model = dict(widths=tuple(widths), dim=dim, heads=heads, enc_layers=enc, dec_layers=dec,
                   num_queries=queries)
    # matcher: "scipy" (host callback, lib.detection.matching.assign) or "jax" (in-graph,
    # lib.detection.assignment.assign_jax: no callback, so the persistent compile cache works)
    c.loss = {"class": 2.0, "l1": 5.0, "giou": 2.0, "obj": 1.0, "cd": 1.0, "matcher": matcher}
    c.optim = dict(lr=lr, finetune_lr=ft_lr, weight_decay=1e-4, clip=0.5, warmup=warmup,
                   finetune_warmup=warmup if ft_warmup is None else ft_warmup, schedule=schedule)
    # wall-clock budget (None = off): pre-training stops at the next step after
    # pretrain_fraction of it, each fine-tune after an equal share of what is left minus
    # the expected evaluation time (eval_reserve_s before the first one is measured)
    # precompile: compile every fine-tune's train step in a background thread during
    # pre-training, into JAX's persistent cache (compile_cache_dir, default <workdir>/xla_cache),
    # so a stage's own compile is a cache read (needs matcher "jax")
    c.run = dict(time_budget_s=time_budget_s, pretrain_fraction=pretrain_fraction,
                 eval_reserve_s=eval_reserve_s, precompile=precompile, compile_cache_dir=None)
    c.sparse = dict(finetune_steps=finetune, methods=tuple(methods), budgets=tuple(budgets),
                    ablations=tuple(ablations), ablation_budget=ablation_budget,
                    cascade=tuple(cascade), focus_level_weights=tuple(focus_w),
                    fine_levels=fine_levels, temperature=0.1,
                    # holistic aggregation of the coarse levels: "context" (dropped tokens
                    # pooled into one context slot per level) or "kept" (the earlier design:
                    # spread over the kept tokens); compare_holistic_kept adds a row with
                    # "kept" at ablation_budget
                    holistic="context", compare_holistic_kept=False)
    c.eval = dict(batch_size=eval_batch, area_scale=(image_size / 256) ** 2, throughput_batch=tp_batch,
                  throughput_repeats=tp_reps, plots=True)
    return c


ALL_ABLATIONS = ("no_density", "no_proximal", "no_holistic", "no_rescore", "no_center_distance")


def _cpu_long():
    c = _build(
        tag="dynamic_detr_cpu_long", steps=8000, finetune=300, image_size=32, num_classes=4,
        max_objects=3, scales=(5, 16), batch=16, val=500, widths=(16, 32, 48), dim=48,
        heads=4, enc=3, dec=3, queries=16, budgets=(0.25, 0.5), ablation_budget=0.25,
        ablations=ALL_ABLATIONS, cascade=(1.3, 1.0, 0.7), focus_w=(1.0, 1.5, 2.0),
        fine_levels=1, lr=1e-3, ft_lr=2e-4, warmup=200, log_every=100, checkpoint_every=1000,
        eval_batch=100)
    c.loss.matcher = "jax"
    c.sparse.compare_holistic_kept = True
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="dynamic_detr_tiny", steps=2, finetune=1, image_size=32, num_classes=3,
            max_objects=3, scales=(6, 14), batch=2, val=4, widths=(8, 8), dim=8, heads=1, enc=1,
            dec=1, queries=3, budgets=(0.5,), ablation_budget=0.5, ablations=("no_proximal",),
            cascade=(1.0,), focus_w=(1.0, 2.0), fine_levels=1, methods=("topk", "dynamic"),
            warmup=1, log_every=1, checkpoint_every=2, eval_batch=8, tp_batch=2, tp_reps=1),
        "quick": lambda: _build(
            tag="dynamic_detr_quick", steps=1000, finetune=60, image_size=32, num_classes=4,
            max_objects=3, scales=(5, 16), batch=16, val=200, widths=(16, 32, 48), dim=48,
            heads=4, enc=3, dec=3, queries=16, budgets=(0.25, 0.5), ablation_budget=0.25,
            ablations=("no_density", "no_proximal", "no_holistic", "no_center_distance"), cascade=(1.3, 1.0, 0.7), focus_w=(1.0, 1.5, 2.0),
            fine_levels=1, lr=1e-3, ft_lr=2e-4, warmup=100, log_every=25, checkpoint_every=250),
        "cpu_long": lambda: _cpu_long(),
        "gpu": lambda: _build(
            tag="dynamic_detr_gpu", steps=20_000, finetune=4_000, image_size=64, num_classes=6,
            max_objects=8, scales=(6, 32), batch=32, val=500, widths=(32, 64, 96), dim=96,
            heads=4, enc=3, dec=3, queries=30, budgets=(0.25, 0.5), ablation_budget=0.25,
            ablations=ALL_ABLATIONS, cascade=(1.3, 1.0, 0.7), focus_w=(1.0, 1.5, 2.0),
            fine_levels=1, lr=5e-4, ft_lr=1e-4, warmup=300, log_every=100, checkpoint_every=1000,
            eval_batch=100, tp_batch=64, tp_reps=10, schedule="constant", time_budget_s=340.0,
            pretrain_fraction=0.35, eval_reserve_s=15.0, workers=8,
            ft_warmup=50, precompile=True, matcher="jax"),
        "paper": lambda: _build(
            tag="dynamic_detr_paper", steps=150_000, finetune=30_000, image_size=512,
            num_classes=6, max_objects=30, scales=(8, 256), batch=32, val=5000,
            widths=(128, 256, 512, 1024), dim=256, heads=8, enc=6, dec=6, queries=300,
            budgets=(0.1, 0.2, 0.3, 0.5), ablation_budget=0.2, ablations=ALL_ABLATIONS,
            cascade=(1.5, 1.3, 1.1, 0.9, 0.7, 0.5), focus_w=(1.0, 1.25, 1.5, 2.0),
            fine_levels=2, lr=2e-4, ft_lr=1e-4, warmup=1000, log_every=100,
            checkpoint_every=2000, eval_batch=32, tp_batch=16, tp_reps=20),
    }, arg, default="quick")
