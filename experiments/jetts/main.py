r"""JETTS: judges as evaluators for test-time scaling (Zhou, Xu et al., ICML 2025), in small.

    python experiments/jetts/main.py --config=configs/jetts/jetts.py:quick --workdir=workdirs/jetts_quick

Trains the local generator, judge LM, ORM and PRM (or points at served models), builds
response pools and step trees, runs reranking / beam search / refinement with every judge,
and writes results.json, results.md and plots/ to the workdir.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.jetts.train:train_and_evaluate")  # imported after flag parsing
