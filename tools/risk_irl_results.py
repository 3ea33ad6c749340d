"""Print a risk-IRL run's tables and put them into the experiment's README.

    python tools/risk_irl_results.py --workdir=workdirs/risk_irl_quick_humans \
        --readme=experiments/risk_irl/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/risk_irl/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the targets and the machine line, and with
`--readme` replaces the text between `<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.risk_irl.report import render

if __name__ == "__main__":
    results_tool("risk_irl", render, default_workdir="workdirs/risk_irl_quick_humans")
