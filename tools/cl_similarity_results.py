"""Print a cl_similarity run's tables and put them into the experiment's README.

    python tools/cl_similarity_results.py --workdir=workdirs/cl_similarity_quick \
        --readme=experiments/cl_similarity/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cl_similarity/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the targets and the machine line,
and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.cl_similarity.report import render
from lib.common.report import results_tool

if __name__ == "__main__":
    results_tool("cl_similarity", render)
