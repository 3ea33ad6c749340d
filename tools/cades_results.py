"""Print a CADES run's tables and put them into the experiment's README.

    python tools/cades_results.py --workdir=workdirs/cades_quick \
        --readme=experiments/cades/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cades/main.py), recomputes the
per-family summaries and the targets from the raw AUROC and FPR numbers stored there
(`lib.cades.report.resummarise`), prints the markdown tables with the machine line, and
with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.cades import report
from lib.common.report import results_tool

if __name__ == "__main__":
    results_tool("cades", report.render)
