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

from experiments.adam_abc import train
from lib.adam_abc import report
from lib.common.report import results_tool

_PLOTS = flags.DEFINE_bool("plots", False, "Also redraw every figure into <workdir>/plots.")


def verdicts(results: dict) -> list[str]:
    """One line per target group: how many checks were met."""
    lines = []
    for part, groups in results.get("targets", {}).items():
        for group, checks in groups.items():
            flags_ = [v for c in checks.values() for v in (c.values() if isinstance(c, dict) else [c])]
            lines.append(f"{part}.{group}: {sum(flags_)}/{len(flags_)} met")
    return lines


def render(results: dict, config: dict) -> str:
    if _PLOTS.value:
        for path in train.write_plots(results, os.path.join(flags.FLAGS.workdir, "plots")):
            print("wrote", path)
    return f"{report.tables(results)}\n\n" + "\n".join(verdicts(results))


if __name__ == "__main__":
    results_tool("adam_abc", render)
