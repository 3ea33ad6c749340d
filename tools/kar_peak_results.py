"""Print a KAR/PEAK run's tables and put them into the experiment's README.

    python tools/kar_peak_results.py --workdir=workdirs/kar_peak_quick \
        --readme=experiments/kar_peak/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/kar_peak/main.py), prints the
method × image × mask PSNR/SSIM table, the alignment tables and the targets (MET/MISSED,
recomputed from the measured rows by `lib.kar_peak.report.targets`)
with the machine line, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.kar_peak.report import render

if __name__ == "__main__":
    results_tool("kar_peak", render)
