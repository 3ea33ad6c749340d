"""Print a KAR/PEAK run's tables and put them into the experiment's README.

    python tools/kar_peak_results.py --workdir=workdirs/kar_peak_quick \
        --readme=experiments/kar_peak/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/kar_peak/main.py), prints the
method × image × mask PSNR/SSIM table, the alignment tables and the targets (MET/MISSED,
recomputed from the measured rows by `lib.kar_peak.report.summarise`)
with the machine line, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.kar_peak.report import summarise, tables


def render(results: dict, config: dict) -> str:
    results["targets"] = summarise(results, config["methods"])   # definitions live in lib/kar_peak/report.py
    steps = [f"{config['train']['num_steps']} steps per image fit"] if "images" in results else []
    if "regression" in results:
        steps.append(f"{config['regression']['num_steps']} per 1-D fit")
    return (f"{tables(results)}\n\nConfig `{config['tag']}` ({config['data']['size']}², "
            f"{', '.join(steps)}); measured on {results['machine']} in {results['wall_s']:.0f} s.")


if __name__ == "__main__":
    results_tool("kar_peak", render)
