r"""SketchDNN (Chereddy & Femiani, ICML 2025): Gaussian-Softmax diffusion for CAD sketches.

    python experiments/sketchdnn/main.py --config=configs/sketchdnn/sketchdnn.py:quick \
        --workdir=workdirs/sketchdnn_quick

Trains a metric sketch encoder and, for each of config.runs, a permutation-equivariant
denoiser (Gaussian-Softmax, one-hot Gaussian labels, D3PM labels, Gaussian-Softmax with
positional encoding); samples and measures Fréchet distance, precision/recall, validity and
the NLL bound. Writes results.json, results.md, plots/ and models/* to the workdir;
rerunning resumes training and recomputes the evaluation.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.sketchdnn.train:train_and_evaluate")  # imported after flag parsing
