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

import os

from absl import app, flags

from lib.common import report
from lib.common import workdir as wd
from lib.kar_peak.report import summarise, tables

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/kar_peak_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/kar_peak/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    results["targets"] = summarise(results, config["methods"])   # definitions live in lib/kar_peak/report.py
    steps = [f"{config['train']['num_steps']} steps per image fit"] if "images" in results else []
    if "regression" in results:
        steps.append(f"{config['regression']['num_steps']} per 1-D fit")
    text = (f"{tables(results)}\n\nConfig `{config['tag']}` ({config['data']['size']}², "
            f"{', '.join(steps)}); measured on {results['machine']} in {results['wall_s']:.0f} s.")
    if _README.value:
        report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
