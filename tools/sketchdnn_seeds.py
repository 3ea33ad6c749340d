"""Tabulate a SketchDNN config run over several training seeds and splice it into the README.

    python tools/sketchdnn_seeds.py \
        --workdirs=workdirs/sketchdnn/official_s0,workdirs/sketchdnn/official_s1,workdirs/sketchdnn/official_s2 \
        --readme=experiments/sketchdnn/README.md --tag=official

Each workdir is one run of experiments/sketchdnn/main.py with the same config except
`train.seed`. Prints the mean ± std table over seeds, the claims ranked only where the
models are more than 2 seed standard deviations apart, and the FD / dangling-end curves
(lib/sketchdnn/seeds.py); with --readme replaces the block `tag` there.
`tools/results.py --paper=sketchdnn --workdir=<seed 0> --seeds=<the others> --readme=...
--tag=... --publish` writes the same block and also the claims to results_<tag>.json.
"""
from __future__ import annotations

import sys

from absl import flags

from lib.common.cli import run_tool
from lib.common import report
from lib.sketchdnn import seeds

WORKDIRS = flags.DEFINE_list("workdirs", None, "Run directories, one per training seed.")
README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
TAG = flags.DEFINE_string("tag", "official", "Name of the marked block in --readme.")


def main(_):
    if not WORKDIRS.value:
        sys.exit("--workdirs: give the run directories, comma-separated")
    try:
        text = seeds.render([seeds.load(w) for w in WORKDIRS.value], WORKDIRS.value)
    except (FileNotFoundError, ValueError) as err:
        sys.exit(str(err))
    if README.value:
        report.splice(README.value, TAG.value, text)
    print(text)


if __name__ == "__main__":
    run_tool(main)
