r"""3D-FLEG: few-shot class-incremental learning of point clouds with geometric prompts.

    python experiments/fleg3d/main.py --config=configs/fleg3d/fleg3d.py:quick \
        --workdir=workdirs/fleg3d_quick

Builds the procedural point-cloud bank, embeds the class prompts with MiniLM once, trains
3D-FLEG, its ablations and the FILP-3D-like network on the base session (resuming from
the workdir's checkpoints), runs the same-domain and cross-domain incremental protocols
for every method and writes results.json, results.md and plots/ to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.fleg3d.train:train_and_evaluate")  # imported after flag parsing
