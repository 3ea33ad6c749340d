r"""EditLord: learning code-transformation rules for code editing (Li et al., ICML 2025), in small.

    python experiments/editlord/main.py --config=configs/editlord/editlord.py:quick \
        --workdir=workdirs/editlord_quick

Builds before/after pairs from HumanEval, learns a rule book (Algorithm 1), fine-tunes the
workspace LM as an editor in four variants, evaluates correctness, editing performance and
robustness, and writes results.json, results.md and plots/ to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.editlord.train:train_and_evaluate")  # imported after flag parsing
