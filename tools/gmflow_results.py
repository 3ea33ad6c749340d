"""Print a GMFlow run's tables and put them into the experiment's README.

    python tools/gmflow_results.py --workdir=workdirs/gmflow_quick \
        --readme=experiments/gmflow/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/gmflow/main.py), prints the targets,
the toy and digits tables (the same as `<workdir>/results.md`) with the machine line and
the training budget, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.gmflow.report import render

if __name__ == "__main__":
    results_tool("gmflow", render)
