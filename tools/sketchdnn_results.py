"""Print a SketchDNN run's tables and put them into the experiment's README.

    python tools/sketchdnn_results.py --workdir=workdirs/sketchdnn_quick \
        --readme=experiments/sketchdnn/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/sketchdnn/main.py), prints the model
table and the targets (the same as `<workdir>/results.md`) with the machine line and the
budget, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.sketchdnn.report import render

if __name__ == "__main__":
    results_tool("sketchdnn", render)
