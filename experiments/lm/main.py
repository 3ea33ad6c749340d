r"""Train the small lib/lm transformer on step-by-step addition and measure held-out exact match.

    python experiments/lm/main.py --config=configs/lm/lm.py:quick --workdir=workdirs/lm_quick

Writes config.json, metrics.jsonl, checkpoints/, lm_model.json, tokenizer.json (what
tools/serve_lm.py needs), results.json, results.md and plots/ to the workdir; rerunning
resumes from the newest checkpoint.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.lm.train:train_and_evaluate")  # imported after flag parsing
