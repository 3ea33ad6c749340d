"""Print a spurious-ridge run's tables and put them into the experiment's README.

    python tools/spurious_ridge_results.py --workdir=workdirs/spurious_ridge_quick \
        --readme=experiments/spurious_ridge/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/spurious_ridge/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the machine line and the
targets, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.spurious_ridge.report import render

if __name__ == "__main__":
    results_tool("spurious_ridge", render)
