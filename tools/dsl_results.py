"""Print a DSL run's accuracy table and targets and put them into the experiment's README.

    python tools/dsl_results.py --workdir=workdirs/dsl_quick \
        --readme=experiments/dsl/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/dsl/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the config tag, machine line and wall time,
and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.dsl.report import render

if __name__ == "__main__":
    results_tool("dsl", render)
