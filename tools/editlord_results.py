"""Print an EditLord run's tables and targets and put them into the experiment's README.

    python tools/editlord_results.py --workdir=workdirs/editlord_quick \
        --readme=experiments/editlord/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/editlord/main.py), prints
`lib.editlord.report.render` (the tables of `<workdir>/results.md` with the config tag,
machine line and wall time) and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there (the earlier attempts'
blocks are in experiments/editlord/NOTES.md).
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.editlord.report import render

if __name__ == "__main__":
    results_tool("editlord", render)
