r"""KAR and PEAK: kernel alignment for implicit neural representations (Li et al., ICML 2025).

    python experiments/kar_peak/main.py --config=configs/kar_peak/kar_peak.py:quick \
        --workdir=workdirs/kar_peak_quick

Fits ReLU+PE, RFF, SIREN, FINER, RFF+KAR, PEAK and PEAK+KAR to scikit-image pictures with
random / patch / textural missing pixels, measures PSNR and SSIM on the missing pixels and
NTK alignment, runs the 1-D regression with a closed-form optimal kernel, and writes
results.json, results.md and plots/ to the workdir. Rerunning resumes.
"""
from lib.common import cli

if __name__ == "__main__":
    cli.run("experiments.kar_peak.train:train_and_evaluate")  # imported after flag parsing
