r"""ANOVA-TPNN (Park et al., ICML 2025): a neural functional ANOVA model with unique components.

    python experiments/anova_tpnn/main.py --config=configs/anova_tpnn/anova_tpnn.py:quick \
        --workdir=workdirs/anova_tpnn_quick

Trains ANOVA-TPNN, NA²M, NB²M and an MLP (10 replicas each, vmapped) on synthetic sets with
known components, diabetes, breast cancer and a Madelon-style set; writes results.json,
results.md and plots/ to the workdir. Rerunning the command resumes.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.anova_tpnn.train:train_and_evaluate")  # imported after flag parsing
