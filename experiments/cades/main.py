r"""CADES: conformal anomaly detection in event sequences (Zhang et al., ICML 2025).

    python experiments/cades/main.py --config=configs/cades/cades.py:quick --workdir=workdirs/cades_quick
    python experiments/cades/main.py --config=configs/cades/cades.py:quick --config.parts="('spp',)"

AUROC per scenario and detectability for CADES and its baselines, and the empirical false
positive rate over many calibration/test splits; writes results.json, results.md and
plots/ to the workdir (see experiments/cades/README.md).
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.cades.train:train_and_evaluate")  # imported after flag parsing
