"""Similarities of embeddings in contrastive learning: free-embedding theory and the SimCLR sweep.

    python experiments/cl_similarity/main.py --config=configs/cl_similarity/cl_similarity.py:quick \
        --workdir=workdirs/cl_similarity_quick

Variants:
  tiny    n = 8 free embeddings, 200 Adam steps; SimCLR ± VRNS on 200 digits, batch 16,
          1 epoch, a 1-stage ResNet of width 8 (tests; seconds).
  quick   n = 32, d = 64 free embeddings (4,000 Adam steps per run); SimCLR (t = 0.2) with and
          without VRNS (λ = 30) at batch 16..512 on all 1,797 8×8 digits and on a 3,000-image
          Fashion-MNIST subset pooled to 14×14, 10 epochs each, a ResNet with stages 16/32
          (the README's numbers; 2 shared CPU cores, see the README for the wall time).
  paper   the paper's SimCLR setting transposed to these data sets: full Fashion-MNIST at
          28×28, ResNet stages 64/128/256/512 × 2 blocks, 200 epochs, SGD lr 0.3·B/256,
          10 warm-up epochs, wd 1e-4 (accelerators; not run here).
Run one part with --config.parts="('theory',)"; one data set with
--config.ssl.datasets="('digits',)".
"""
from lib.common.config import variant_config
from lib.cl_similarity.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "cl_similarity_tiny", "mesh.data": 1, "theory.n": 8, "theory.d": 16, "theory.steps": 200,
             "theory.siglip_biases": (0.0,), "theory.batch_sizes": (4,),
             "ssl.datasets": ("digits",), "ssl.batch_sizes": (16,), "ssl.epochs": 1,
             "digits.num_images": 200, "fashion_mnist.num_images": 300,
             "fashion_mnist.downsample": 4, "model.stage_widths": (8,), "model.head_hidden": 16,
             "model.proj_dim": 16, "probe.steps": 100, "eval.max_pairs": 64}),
        "quick": lambda: config(
            {"tag": "cl_similarity_quick", "theory.n": 32, "theory.d": 64, "theory.steps": 4000,
             "theory.batch_sizes": (2, 4, 8, 16), "ssl.epochs": 10,
             "fashion_mnist.num_images": 3000, "fashion_mnist.downsample": 2,
             "model.stage_widths": (16, 32), "model.head_hidden": 128, "model.proj_dim": 64,
             "probe.steps": 500, "eval.max_pairs": 1000}),
        "paper": lambda: config(
            {"tag": "cl_similarity_paper", "theory.n": 128, "theory.d": 256,
             "theory.steps": 20_000, "theory.batch_sizes": (2, 4, 8, 16, 32, 64),
             "ssl.epochs": 200, "ssl.optimizer": "sgd", "ssl.lr": 0.3,
             "ssl.lr_scaling": "linear", "ssl.warmup_epochs": 10, "fashion_mnist.num_images": -1,
             "fashion_mnist.downsample": 1, "model.stage_widths": (64, 128, 256, 512),
             "model.blocks_per_stage": 2, "model.head_hidden": 512, "model.proj_dim": 128,
             "probe.steps": 2000, "eval.max_pairs": 5000}),
    }, arg, default="quick")
