r"""Risk-sensitive IRL: CATY-UL and TRACTOR-UL (Lazzati & Metelli, ICML 2025).

    python experiments/risk_irl/main.py --config=configs/risk_irl/risk_irl.py:quick \
        --workdir=workdirs/risk_irl_quick

Runs the parts in config.parts (investment MDP with simulated experts, the participants'
answers, random MDPs of several sizes, several environments) and writes results.json,
results.md, parts/*.json and plots/ to the workdir; rerunning reuses finished parts.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.risk_irl.train:train_and_evaluate")  # imported after flag parsing
