r"""EARTH: Epidemiology-Aware Neural ODE with Continuous Disease Transmission Graph (ICML 2025).

    python experiments/earth/main.py --config=configs/earth/earth.py:quick --workdir=workdirs/earth_quick
    python experiments/earth/main.py --config=configs/earth/earth.py:quick \
        --config.datasets="('simulated',)" --workdir=workdirs/earth_sim

Trains EARTH, its three ablations and the baselines on each dataset at each horizon
through lib.common.train_loop, and writes results.json, results.md, predictions.npz and
plots/forecast_<dataset>_h<h>.png to the workdir. Rerunning resumes.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.earth.train:train_and_evaluate")  # imported after flag parsing
