"""Print every target of one or more runs: one line `<paper> <tag> <dotted path>: MET|MISSED`.

    python tools/targets.py --workdir=workdirs/dsl_quick
    python tools/targets.py --workdir=workdirs/dsl_quick,workdirs/cades_quick

Reads each `<workdir>/results.json` and lists the target records of its "targets" tree
(`lib.common.report.walk_targets`: every dict with a bool "met", at any depth) in the
order the run stored them. The tag is config.json's "tag"; the paper is the lib/<paper>
folder the tag (else the workdir's name) starts with, "?" when none does. Targets that a
paper stores as bare bools or under another name than "met" are not listed; a run with no
target record says so on stderr. A missing or unreadable results.json stops the tool with
one line naming the file (exit 2) before anything is printed.
"""
from __future__ import annotations

import os
import sys

from absl import app, flags

from lib.common import paths, report
from lib.common import workdir as wd

WORKDIRS = flags.DEFINE_list("workdir", None, "Run directories, comma-separated.",
                             required=True)


def papers() -> list[str]:
    """The papers: lib/<paper>/ folders with a report.py, longest name first."""
    lib = os.path.join(paths.REPO_ROOT, "lib")
    names = [n for n in os.listdir(lib)
             if n != "common" and os.path.exists(os.path.join(lib, n, "report.py"))]
    return sorted(names, key=lambda n: (-len(n), n))


def paper_of(tag: str, workdir: str) -> str:
    for name in (tag, os.path.basename(os.path.normpath(workdir))):
        for paper in papers():
            if name == paper or name.startswith(paper + "_"):
                return paper
    return "?"


def read(workdir: str) -> tuple[dict, str]:
    """(results, tag) of a run; SystemExit (one line, exit 2) when results.json is missing or
    unreadable. The tag is the workdir's name when config.json is absent or has none."""
    path = os.path.join(workdir, wd.RESULTS)
    try:
        results = wd.read_json(path)
        if not isinstance(results, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        print(f"targets: cannot read {path}: {' '.join(str(err).split())}", file=sys.stderr)
        raise SystemExit(2)
    try:
        tag = wd.read_json(os.path.join(workdir, wd.CONFIG)).get("tag")
    except (OSError, ValueError, AttributeError):
        tag = None
    return results, tag or os.path.basename(os.path.normpath(workdir))


def lines(workdir: str, results: dict, tag: str) -> list[str]:
    paper = paper_of(tag, workdir)
    return [f"{paper} {tag} {path}: {report.verdict(record)}"
            for path, record in report.walk_targets(results.get("targets") or {})]


def main(argv) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {' '.join(argv[1:])}")
    runs = [(w, *read(w)) for w in WORKDIRS.value]      # every file read before any output
    for workdir, results, tag in runs:
        out = lines(workdir, results, tag)
        if not out:
            print(f"targets: no target records in {os.path.join(workdir, wd.RESULTS)}",
                  file=sys.stderr)
        for line in out:
            print(line)


if __name__ == "__main__":
    app.run(main)
