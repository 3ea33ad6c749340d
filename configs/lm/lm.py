"""The small language model of lib/lm trained on step-by-step multi-digit addition.

    python experiments/lm/main.py --config=configs/lm/lm.py:quick --workdir=workdirs/lm_quick

Variants:
  tiny    2 layers, width 32, 2-digit sums, 60 steps (tests; seconds). Learns little.
  quick   4 layers, width 128 (~0.8 M params), 4-digit sums written column by column,
          1,000 steps of batch 64 on 2 CPU cores (minutes). Target: >= 95 % exact match
          on 500 held-out problems (experiments/lm/README.md).
  paper   24 layers, width 1024, 16 heads (~0.3 B params), 2,048-token context, 16-digit
          sums, BPE with 8,000 merges, bfloat16 compute, batch 256 for an accelerator
          (not run here).
"""
import ml_collections

from lib.common.config import mesh_block, train_block, variant_config
from lib.lm.config_schema import validate  # noqa: F401  (used by the config test)

VARIANTS = ("tiny", "quick", "paper")


def _build(*, tag, digits, num_train, bpe_merges, d_model, num_layers, num_heads, d_ff,
           max_len, lr, warmup, steps, batch, num_eval, eval_batch, log_every,
           checkpoint_every, dtype="float32"):
    c = ml_collections.ConfigDict()
    c.tag = tag
    c.seed = 0
    c.task = dict(digits=digits, pad=True, test_fraction=0.1, num_train=num_train)
    c.tokenizer = dict(bpe_merges=bpe_merges)
    c.model = dict(d_model=d_model, num_layers=num_layers, num_heads=num_heads, d_ff=d_ff,
                   max_len=max_len, dtype=dtype)
    c.optim = dict(lr=lr, warmup_steps=warmup, weight_decay=0.01, grad_clip=1.0)
    c.train = train_block(steps, log_every=log_every, checkpoint_every=checkpoint_every)
    c.train.batch_size = batch
    c.eval = dict(num_eval=num_eval, batch_size=eval_batch, target_exact_match=0.95, plots=True)
    c.mesh = mesh_block()
    return c


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: _build(
            tag="lm_tiny", digits=2, num_train=512, bpe_merges=0, d_model=32, num_layers=2,
            num_heads=2, d_ff=64, max_len=48, lr=3e-3, warmup=5, steps=60, batch=16,
            num_eval=16, eval_batch=16, log_every=10, checkpoint_every=30),
        "quick": lambda: _build(
            tag="lm_quick", digits=4, num_train=64_000, bpe_merges=0, d_model=128,
            num_layers=4, num_heads=4, d_ff=512, max_len=64, lr=1e-3, warmup=100,
            steps=1000, batch=64, num_eval=500, eval_batch=250, log_every=50,
            checkpoint_every=250),
        "paper": lambda: _build(
            tag="lm_paper", digits=16, num_train=4_000_000, bpe_merges=8000, d_model=1024,
            num_layers=24, num_heads=16, d_ff=4096, max_len=2048, lr=3e-4, warmup=2000,
            steps=100_000, batch=256, num_eval=5000, eval_batch=500, log_every=100,
            checkpoint_every=2000, dtype="bfloat16"),
    }, arg, default="quick")
