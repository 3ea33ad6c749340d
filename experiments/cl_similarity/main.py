r"""Similarities of embeddings in contrastive learning (Lee, Lim, Lee & Sohn, ICML 2025).

    python experiments/cl_similarity/main.py --config=configs/cl_similarity/cl_similarity.py:quick \
        --workdir=workdirs/cl_similarity_quick

Checks the full-batch and mini-batch theorems with freely optimised embeddings against
their closed forms, then trains SimCLR with and without the variance-reducing auxiliary
loss (VRNS) over batch sizes on 8×8 digits and Fashion-MNIST, and writes results.json,
results.md (tables) and plots/ to the workdir. Rerunning the command resumes.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.cl_similarity.train:train_and_evaluate")  # imported after flag parsing
