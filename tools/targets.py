"""Print every target of one or more runs: one line `<workdir> <tag> <dotted path>: MET|MISSED`.

    python tools/targets.py --workdir=workdirs/dsl_quick
    python tools/targets.py --workdir=workdirs/dsl_quick,workdirs/cades_quick
    python tools/targets.py --workdir=experiments/multipdenet/front.json

Reads each `<workdir>/results.json` (or a results JSON file given itself, e.g. a benchmark's
output; its tag is the file's name) and lists the target records of its "targets" tree
(`lib.common.report.walk_targets`: every dict with a bool "met", at any depth) in the
order the run stored them. The tag is config.json's "tag" (else the workdir's name).
Targets that a paper stores as bare bools or under another name than "met" are not listed;
a run with no target record says so on stderr. A missing or unreadable results.json stops the tool with
one line naming the file (exit 2) before anything is printed.
"""
from __future__ import annotations

import os
import sys

from absl import app, flags

from lib.common.cli import run_tool
from lib.common import report
from lib.common import workdir as wd

WORKDIRS = flags.DEFINE_list("workdir", None, "Run directories (or results JSON files), "
                             "comma-separated.", required=True)


def read(workdir: str) -> tuple[dict, str]:
    """(results, tag) of a run; SystemExit (one line, exit 2) when results.json is missing or
    unreadable. The tag is the workdir's name when config.json is absent or has none."""
    path = workdir if os.path.isfile(workdir) else os.path.join(workdir, wd.RESULTS)
    try:
        results = wd.read_json(path)
        if not isinstance(results, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        print(f"targets: cannot read {path}: {' '.join(str(err).split())}", file=sys.stderr)
        raise SystemExit(2)
    if path == workdir:
        return results, os.path.splitext(os.path.basename(workdir))[0]
    try:
        tag = wd.read_json(os.path.join(workdir, wd.CONFIG)).get("tag")
    except (OSError, ValueError, AttributeError):
        tag = None
    return results, tag or os.path.basename(os.path.normpath(workdir))


def lines(workdir: str, results: dict, tag: str) -> list[str]:
    return [f"{workdir} {tag} {path}: {report.verdict(record)}"
            for path, record in report.walk_targets(results.get("targets") or {})]


def main(argv) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    runs = [(w, *read(w)) for w in WORKDIRS.value]      # every file read before any output
    for workdir, results, tag in runs:
        out = lines(workdir, results, tag)
        if not out:
            where = workdir if os.path.isfile(workdir) else os.path.join(workdir, wd.RESULTS)
            print(f"targets: no target records in {where}",
                  file=sys.stderr)
        for line in out:
            print(line)


if __name__ == "__main__":
    run_tool(main)
