"""Print the lm experiment's measured table and put it into experiments/lm/README.md.

    python tools/lm_results.py --workdir=workdirs/lm_quick \
        --readme=experiments/lm/README.md --tag=quick

Reads `<workdir>/results.json` (experiments/lm/main.py) and prints the table with the
target (held-out exact match) MET or MISSED, the machine and the wall time
(`lib.lm.report.render` through `lib.common.report.results_tool`). The MiniLM parity
check is tools/lm_minilm_parity.py.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.lm.report import render

if __name__ == "__main__":
    results_tool("lm", render)
