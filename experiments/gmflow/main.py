r"""GMFlow (Gaussian mixture flow matching, Chen et al., ICML 2025): 2-D toys and digits.

    python experiments/gmflow/main.py --config=configs/gmflow/gmflow.py:quick \
        --workdir=workdirs/gmflow_quick
    python experiments/gmflow/main.py --config=configs/gmflow/gmflow.py:quick \
        --config.parts="('toy',)"

Trains GMFlow (K ∈ toy.components) and flow-matching models on the checkerboard and a
Gaussian grid and compares GM-SDE/ODE (1st/2nd order) with Euler/Heun/DDPM over NFE; trains
class-conditional digit models and compares probabilistic guidance with CFG. Writes
results.json, results.md, plots/ and the models' checkpoints (models/*) to the workdir;
rerunning resumes training and recomputes the evaluation.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.gmflow.train:train_and_evaluate")  # imported after flag parsing
