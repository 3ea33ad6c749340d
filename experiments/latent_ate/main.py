r"""ATE estimation with latent features of pre-trained networks (Schulte et al., ICML 2025).

    python experiments/latent_ate/main.py --config=configs/latent_ate/latent_ate.py:quick \
        --workdir=workdirs/latent_ate_quick

Pre-trains a CNN and two autoencoders on images disjoint from the causal sample, simulates
label and "complex" confounding with a known ATE, runs naive/oracle/S-learner/DML
estimators over many replications, and writes results.json, results.md and plots/.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.latent_ate.train:train_and_evaluate")  # imported after flag parsing
