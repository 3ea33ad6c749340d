r"""Spurious correlations in high-dimensional ridge regression (Bombari & Mondelli, ICML 2025).

    python experiments/spurious_ridge/main.py --config=configs/spurious_ridge/spurious_ridge.py:quick \
        --workdir=workdirs/spurious_ridge_quick
    python experiments/spurious_ridge/main.py --config=configs/spurious_ridge/spurious_ridge.py:quick \
        --config.parts="('gaussian',)" --config.gaussian.settings="('base',)"

Compares the deterministic equivalents C^Σ(λ), L^Σ(λ) with ridge fitted on simulated
Gaussian data, checks the random-features equivalence and the trade-off, measures C on
coloured 8×8 digits, and writes results.json, results.md (tables) and plots/ to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.spurious_ridge.train:train_and_evaluate")  # imported after flag parsing
