"""Print a 3D-FLEG run's per-session tables and targets and put them into the README.

    python tools/fleg3d_results.py --workdir=workdirs/fleg3d_quick \
        --readme=experiments/fleg3d/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/fleg3d/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the config tag, the data files of a
real-data run, machine line, wall time and the per-session curves' paths, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.fleg3d.report import render

if __name__ == "__main__":
    results_tool("fleg3d", render)
