r"""Dynamic token aggregation for DETR encoders ("Not All Tokens Matter All The Time",
Cheng et al., ICML 2025) against dense, top-k and foreground-selection encoders.

    python experiments/dynamic_detr/main.py --config=configs/dynamic_detr/dynamic_detr.py:quick \
        --workdir=workdirs/dynamic_detr_quick
    python tools/results.py --paper=dynamic_detr --workdir=workdirs/dynamic_detr_quick \
        --readme=experiments/dynamic_detr/README.md --tag=quick

Trains the dense detector, fine-tunes every encoder variant from it, and writes
results.json, results.md and plots/ap_vs_flops.png to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.dynamic_detr.train:train_and_evaluate")  # imported after flag parsing
