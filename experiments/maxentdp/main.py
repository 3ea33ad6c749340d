r"""MaxEntDP: maximum-entropy RL with a diffusion policy, against SAC (ICML 2025).

    python experiments/maxentdp/main.py --config=configs/maxentdp/maxentdp.py:quick \
        --workdir=workdirs/maxentdp_quick
    python experiments/maxentdp/main.py --config=configs/maxentdp/maxentdp.py:quick \
        --config.envs="('multigoal',)" --workdir=workdirs/maxentdp_multigoal

Trains every (environment, agent) pair of the config with all seeds vmapped on one
device, evaluates, and writes results.json, results.md and plots/ to the workdir;
rerunning the same command resumes each run from its checkpoints.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.maxentdp.train:train_and_evaluate")  # imported after flag parsing
