"""Print a CADES run's tables and put them into the experiment's README.

    python tools/cades_results.py --workdir=workdirs/cades_quick \
        --readme=experiments/cades/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cades/main.py; the runs named in
`--more_workdirs`, comma-separated, e.g. SPP families run in parallel processes, are
merged: `lib.cades.report.merge`), recomputes the per-family summaries and the targets from
the raw AUROC and FPR numbers stored there (`lib.cades.report.resummarise`), prints the
markdown tables with the machine line, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import flags

from lib.cades import report
from lib.cades.scenarios import OFFICIAL_SPP_FAMILIES
from lib.common import workdir as wd
from lib.common.report import results_tool

_MORE = flags.DEFINE_string("more_workdirs", "", "Further run directories, comma-separated, "
                            "whose SPP families are merged with --workdir's (no overlap).")


def _results(workdir: str) -> dict:
    path = os.path.join(workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/cades/main.py first")
    return wd.read_json(path)


def render(results: dict, config: dict) -> str:
    more = [_results(w) for w in _MORE.value.split(",") if w]
    if not more:
        return report.render(results, config)
    try:
        merged = report.merge(results, more, OFFICIAL_SPP_FAMILIES)
    except ValueError as err:
        raise SystemExit(str(err)) from None
    return report.render(merged, config)


if __name__ == "__main__":
    results_tool("cades", render)
