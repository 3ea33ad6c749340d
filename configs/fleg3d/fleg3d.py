"""3D-FLEG: few-shot class-incremental point-cloud classification with geometric prompts.

    python experiments/fleg3d/main.py --config=configs/fleg3d/fleg3d.py:quick \
        --workdir=workdirs/fleg3d_quick
    python tools/fleg3d_results.py --workdir=workdirs/fleg3d_quick \
        --readme=experiments/fleg3d/README.md

Variants:
  tiny    4 base classes + one 2-way 2-shot session, 64 points, 30 steps (tests; seconds).
  quick   25 procedural classes: 10 base + 3 sessions of 5-way 5-shot, 256 points, 100
          training clouds per base class, PointNet widths 32-64-128, 600 steps per network
          (5 networks), 5 support
          draws; same-domain and cross-domain (synthetic -> "real") protocols (2 CPU cores).
  paper   the same protocol at ModelNet-like scale: 1,024 points, 400 clouds per base
          class, wider PointNet, 10,000 steps, 10 draws (for an accelerator; not run here).
"""
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.fleg3d.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")

QUICK_CLASSES = ("sphere", "cube", "cylinder", "cone", "torus", "table", "chair", "lamp",
                 "airplane", "bottle",                                   # base session
                 "mug", "bed", "stool", "dumbbell", "car",               # session 1
                 "bench", "house", "rocket", "bowl", "capsule",          # session 2
                 "bookshelf", "umbrella", "ladder", "pyramid", "sofa")   # session 3


def _build(*, tag, classes, base, ways, shots, points, train_pc, test_pc, pool_pc, widths,
           geo_widths, steps, per_class_batch, repeats, k, ft_steps, log_every=50,
           checkpoint_every=500):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.data = dict(classes=tuple(classes), base_classes=base, ways=ways, shots=shots,
                  num_points=points, train_per_class=train_pc, test_per_class=test_pc,
                  pool_per_class=pool_pc, tilt_deg=10.0)
    c.geometry = dict(k=k, bins=8, d2_bins=16, radial_bins=8)
    c.shift = dict(crop_min=0.2, crop_max=0.45, density_strength=2.0, clutter_fraction=0.1,
                   outlier_fraction=0.03, jitter=0.01)
    c.text = dict(template="a point cloud of a {}.")
    c.model = dict(widths=tuple(widths), geo_widths=tuple(geo_widths), temperature=0.1,
                   proto_weight=1.0, calibrate=True)
    c.loss = dict(align_weight=0.5)
    c.optim = dict(lr=1e-3, warmup_steps=min(100, steps // 10))
    c.per_class_batch = per_class_batch
    c.train = train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.mesh = mesh_block()
    c.variants = ("fleg3d", "no_extraction", "no_embedding", "no_align", "filp3d")
    c.eval = dict(protocols=("same_domain", "cross_domain"), repeats=repeats,
                  finetune_steps=ft_steps, finetune_lr=1e-3, plots=True)
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="fleg3d_tiny", classes=("sphere", "cube", "table", "chair", "mug", "lamp"),
            base=4, ways=2, shots=2, points=64, train_pc=6, test_pc=3, pool_pc=3,
            widths=(16, 32), geo_widths=(32,), steps=30, per_class_batch=2, repeats=2, k=8,
            ft_steps=3, log_every=10, checkpoint_every=20),
        "quick": lambda: _build(
            tag="fleg3d_quick", classes=QUICK_CLASSES, base=10, ways=5, shots=5, points=256,
            train_pc=100, test_pc=30, pool_pc=20, widths=(32, 64, 128), geo_widths=(128, 128),
            steps=600, per_class_batch=4, repeats=5, k=16, ft_steps=30),
        "paper": lambda: _build(
            tag="fleg3d_paper", classes=QUICK_CLASSES, base=10, ways=5, shots=5, points=1024,
            train_pc=400, test_pc=100, pool_pc=50, widths=(64, 128, 256, 512),
            geo_widths=(256, 256), steps=10000, per_class_batch=8, repeats=10, k=20,
            ft_steps=50, checkpoint_every=1000),
    }, arg, default="quick")
