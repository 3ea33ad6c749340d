r"""SWE-Gym (Pan et al., ICML 2025) on generated repositories.

    python experiments/swe_gym/main.py --config=configs/swe_gym/swe_gym.py:quick \
        --workdir=workdirs/swe_gym_quick

Generates >= 200 validated SWE-bench-format instances, runs the search baseline, the
workspace LM before and after rejection-sampling fine-tuning (caps 1 / 2 / 3 / none), a
YES/NO verifier and Pass@K / Best@K on held-out repositories; writes results.json,
results.md, plots/, instances.jsonl and resolved_trajectories.jsonl to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.swe_gym.train:train_and_evaluate")  # imported after flag parsing
