r"""Deep Sturm–Liouville (Vigouroux, Dalmau, Béthune, Boutin; ICML 2025) vs matched MLPs.

    python experiments/dsl/main.py --config=configs/dsl/dsl.py:quick --workdir=workdirs/dsl_quick
    python experiments/dsl/main.py --config=configs/dsl/dsl.py:quick \
        --config.datasets="('wine',)" --config.model.amplitude=w_norm

Trains DSL and an MLP of matched parameter count on each data set at every training
fraction and seed, trains the 2-D toy, and writes results.json, results.md (tables) and
plots/ to the workdir; `tools/results.py --paper=dsl` splices the table into the README.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.dsl.train:train_and_evaluate")  # imported after flag parsing
