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
from lib.common.config import variant_config
from lib.lm.config_schema import config, validate  # noqa: F401  (defaults, rules: KEYS)

VARIANTS = ("tiny", "quick", "paper")


def get_config(arg=None):
    return variant_config({
        "tiny": lambda: config(
            {"tag": "lm_tiny", "mesh.data": 1, "task.digits": 2, "task.num_train": 512, "model.d_model": 32,
             "model.num_layers": 2, "model.num_heads": 2, "model.d_ff": 64, "model.max_len": 48,
             "optim.lr": 0.003, "optim.warmup": 5, "train.num_steps": 60,
             "train.log_every": 10, "train.checkpoint_every": 30, "train.batch_size": 16,
             "eval.num_eval": 16, "eval.batch_size": 16}),
        "quick": lambda: config(
            {"tag": "lm_quick", "task.digits": 4, "task.num_train": 64_000, "model.d_model": 128,
             "model.num_layers": 4, "model.num_heads": 4, "model.d_ff": 512, "model.max_len": 64,
             "optim.lr": 0.001, "optim.warmup": 100, "train.num_steps": 1000,
             "train.log_every": 50, "train.checkpoint_every": 250, "train.batch_size": 64,
             "eval.num_eval": 500, "eval.batch_size": 250}),
        "paper": lambda: config(
            {"tag": "lm_paper", "task.digits": 16, "task.num_train": 4_000_000,
             "tokenizer.bpe_merges": 8000, "model.d_model": 1024, "model.num_layers": 24,
             "model.num_heads": 16, "model.d_ff": 4096, "model.max_len": 2048,
             "model.dtype": "bfloat16", "optim.lr": 0.0003, "optim.warmup": 2000,
             "train.num_steps": 100_000, "train.log_every": 100, "train.checkpoint_every": 2000,
             "train.batch_size": 256, "eval.num_eval": 5000, "eval.batch_size": 500}),
    }, arg, default="quick")
