"""Print an adam_abc run's tables and target verdicts and put them into the experiment's README.

    python tools/adam_abc_results.py --workdir=workdirs/adam_abc_quick \
        --readme=experiments/adam_abc/README.md --tag=quick          # add --plots to redraw

Reads `<workdir>/results.json` (written by experiments/adam_abc/main.py; no recomputation),
prints the Markdown tables (rate slopes with bootstrap intervals, Adam vs SGD, the ε check,
the last-iterate summaries) and a one-line verdict per target group, and with `--readme`
replaces the text between `<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`
there. `--plots` first redraws every figure into `<workdir>/plots`.
"""
from __future__ import annotations

import os

from absl import flags

from lib.adam_abc import plots, report
from lib.common.report import results_tool

_PLOTS = flags.DEFINE_bool("plots", False, "Also redraw every figure into <workdir>/plots.")


def render(results: dict, config: dict) -> str:
    if _PLOTS.value:
        for path in plots.write_plots(results, os.path.join(flags.FLAGS.workdir, "plots")):
            print("wrote", path)
    return report.render(results, config)


if __name__ == "__main__":
    results_tool("adam_abc", render)
