"""Tables and figures of an adam_abc run, from its results.json (no recomputation).

    python tools/adam_abc_results.py workdirs/adam_abc_quick            # print the tables
    python tools/adam_abc_results.py workdirs/adam_abc_quick --plots    # and redraw plots/

Prints the Markdown tables of experiments/adam_abc/README.md (rate slopes with bootstrap
intervals, Adam vs SGD, the ε check, the last-iterate summaries) and a one-line verdict
per target; `--plots` redraws every figure into <workdir>/plots.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.adam_abc import train  # noqa: E402
from lib.adam_abc import report  # noqa: E402


def verdicts(results: dict) -> list[str]:
    """One line per target group: how many checks were met."""
    lines = []
    for part, groups in results.get("targets", {}).items():
        for group, checks in groups.items():
            flags = [v for c in checks.values() for v in (c.values() if isinstance(c, dict) else [c])]
            lines.append(f"{part}.{group}: {sum(flags)}/{len(flags)} met")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir")
    parser.add_argument("--plots", action="store_true", help="redraw <workdir>/plots/*.png")
    args = parser.parse_args(argv)
    path = os.path.join(args.workdir, "results.json")
    if not os.path.exists(path):
        print(f"{path} does not exist; run experiments/adam_abc/main.py first", file=sys.stderr)
        return 1
    with open(path) as f:
        results = json.load(f)
    print(report.tables(results))
    print()
    print("\n".join(verdicts(results)))
    if args.plots:
        for p in train.write_plots(results, os.path.join(args.workdir, "plots")):
            print("wrote", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
