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
import ml_collections

from lib.cl_similarity.config_schema import validate  # noqa: F401  (used by the config test)
from lib.common.config import mesh_block, variant_config
from lib.data.images import FASHION_MNIST_PATH

VARIANTS = ("tiny", "quick", "paper")


def _build(*, tag, n, d, theory_steps, siglip_biases, theory_batches, batch_sizes, epochs,
           digits_images, fashion_images, downsample, widths, blocks, head_hidden, proj_dim,
           optimizer="adam", lr=2e-3, lr_scaling="sqrt", warmup_epochs=1, probe_steps=500,
           max_pairs=1000, datasets=("digits", "fashion_mnist")):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.parts = ("theory", "ssl")
    c.theory = dict(n=n, d=d, steps=theory_steps, record_every=50, lr=0.05, temperature=0.2,
                    siglip_t=10.0, siglip_b=0.0, siglip_biases=tuple(siglip_biases),
                    batch_sizes=tuple(theory_batches), minibatch_loss="simclr",
                    vrns_weight=30.0, tolerance=1e-3)
    c.ssl = dict(datasets=tuple(datasets), batch_sizes=tuple(batch_sizes), epochs=epochs,
                 loss="simclr", temperature=0.2, aux_weight=30.0, optimizer=optimizer, lr=lr,
                 lr_scaling=lr_scaling, weight_decay=1e-4, warmup_epochs=warmup_epochs,
                 test_fraction=0.2)
    c.digits = dict(num_images=digits_images, flip_prob=0.0)
    c.fashion_mnist = dict(path=FASHION_MNIST_PATH, num_images=fashion_images,
                           downsample=downsample, flip_prob=0.5)
    c.augment = dict(min_scale=0.3, jitter_prob=0.8, brightness=0.4, contrast=0.4,
                     noise_std=0.05)
    c.model = dict(stage_widths=tuple(widths), blocks_per_stage=blocks, head_hidden=head_hidden,
                   proj_dim=proj_dim)
    c.probe = dict(steps=probe_steps, lr=0.05, weight_decay=1e-4)
    c.eval = dict(max_pairs=max_pairs, plots=True)
    c.train = dict(log_every=50, checkpoint_every=1000, keep_checkpoints=1)
    c.mesh = mesh_block()
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="cl_similarity_tiny", n=8, d=16, theory_steps=200, siglip_biases=(0.0,),
            theory_batches=(4,), batch_sizes=(16,), epochs=1, digits_images=200,
            fashion_images=300, downsample=4, widths=(8,), blocks=1, head_hidden=16,
            proj_dim=16, probe_steps=100, max_pairs=64, datasets=("digits",)),
        "quick": lambda: _build(
            tag="cl_similarity_quick", n=32, d=64, theory_steps=4000,
            siglip_biases=(-2.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0),
            theory_batches=(2, 4, 8, 16), batch_sizes=(16, 32, 64, 128, 256, 512), epochs=10,
            digits_images=-1, fashion_images=3000, downsample=2, widths=(16, 32), blocks=1,
            head_hidden=128, proj_dim=64),
        "paper": lambda: _build(
            tag="cl_similarity_paper", n=128, d=256, theory_steps=20000,
            siglip_biases=(-2.0, 0.0, 2.0, 4.0, 6.0, 8.0, 10.0),
            theory_batches=(2, 4, 8, 16, 32, 64), batch_sizes=(16, 32, 64, 128, 256, 512),
            epochs=200, digits_images=-1, fashion_images=-1, downsample=1,
            widths=(64, 128, 256, 512), blocks=2, head_hidden=512, proj_dim=128,
            optimizer="sgd", lr=0.3, lr_scaling="linear", warmup_epochs=10, probe_steps=2000,
            max_pairs=5000),
    }, arg, default="quick")
