r"""MultiPDENet: learn to simulate flows on a coarse grid from a few fine-grid trajectories.

    python experiments/multipdenet/main.py --config=configs/multipdenet/burgers.py:quick
    python experiments/multipdenet/main.py --config=configs/multipdenet/navier_stokes.py:quick \
        --config.model.name=fno --workdir=workdirs/ns_fno

Generates the dataset under `config.data_root` if it is not cached, trains (resuming from
the workdir's checkpoints), evaluates on the test trajectories and writes results.json and
plots/ to the workdir. `--config.model.name` picks multipdenet | fno | unet | coarse_solver.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.multipdenet.train:train_and_evaluate")  # imported after flag parsing
