"""Render an EARTH run's tables and put them into experiments/earth/README.md.

    python tools/earth_results.py --workdir=workdirs/earth_quick \
        --readme=experiments/earth/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/earth/main.py after every dataset),
prints per dataset the test RMSE / MAE / PCC / peak metrics of every model at every
horizon, the issue's targets as MET / MISSED with the RMSE margins, the machine line, and
with `--readme` replaces the block between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->`. The forecast plots are in `<workdir>/plots/`.
"""
from __future__ import annotations

from lib.common import report
from lib.earth.report import render

if __name__ == "__main__":
    report.results_tool("earth", render)
