"""Print a paper's results block and put it into a marked block of a README.

    python tools/results.py --paper=cades --workdir=workdirs/cades_quick \
        --readme=experiments/cades/README.md --tag=quick
    python tools/results.py --paper=cades --help        # the flags, cades' own included

Reads `<workdir>/results.json` and `config.json` (written by experiments/<paper>/main.py;
a missing one stops with a line naming it and that binary), prints the block and, with
`--readme`, first replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there (`lib.common.report.splice`).

The block is `lib/<paper>/report.py`'s `render(results, config)`. A paper that needs more
declares it in that module:

    RESULTS_WORKDIR = "workdirs/..."       # the default --workdir (else workdirs/<paper>_quick)
    RESULTS_FLAGS = {"name": (kind, default, "help")}    # kind: "bool", "string" or "list"
    def results_block(results, config, workdir, **flags) -> str   # used instead of render

A refused merge, a missing file or README marker (ValueError, FileNotFoundError) stops
with its one line.
"""
from __future__ import annotations

import importlib
import os
import sys

from absl import app, flags

from lib.common import report, workdir as wd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = {"bool": flags.DEFINE_bool, "string": flags.DEFINE_string, "list": flags.DEFINE_list}



def define_base_flags() -> None:
    """--paper, --workdir, --readme, --tag: defined when the tool runs, not at import, so that
    importing it (tests, notebooks) leaves the process's absl flags alone."""
    flags.DEFINE_string("paper", None, "Paper whose lib/<paper>/report.py renders the run.")
    flags.DEFINE_string("workdir", None, "Run directory (default: the paper's).")
    flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the text.")
    flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def papers() -> list[str]:
    """The papers: each experiments/<p>/main.py with a lib/<p>/report.py."""
    return sorted(p for p in os.listdir(os.path.join(ROOT, "experiments"))
                  if os.path.isfile(os.path.join(ROOT, "experiments", p, "main.py"))
                  and os.path.isfile(os.path.join(ROOT, "lib", p, "report.py")))


def define_flags(paper: str):
    """(report module, {name: flag}) of `paper`: sets --workdir's default and defines the
    module's RESULTS_FLAGS."""
    module = importlib.import_module(f"lib.{paper}.report")
    default = getattr(module, "RESULTS_WORKDIR", f"workdirs/{paper}_quick")
    flags.FLAGS.set_default("workdir", default)
    extra = {}
    for name, (kind, default, help_) in getattr(module, "RESULTS_FLAGS", {}).items():
        if kind not in KINDS:
            raise ValueError(f"lib/{paper}/report.py RESULTS_FLAGS[{name!r}]: kind {kind!r} is "
                             f"not one of {', '.join(KINDS)}")
        extra[name] = KINDS[kind](name, default, help_)
    return module, extra


def block(module, workdir: str, extra: dict, experiment: str) -> str:
    """The module's text of the run in `workdir`; `extra` maps flag names to values."""
    results = report.read_results(workdir, experiment)
    config = wd.read_json(os.path.join(workdir, wd.CONFIG))
    if hasattr(module, "results_block"):
        return module.results_block(results, config, workdir, **extra)
    return module.render(results, config)


def main(argv: list[str]) -> None:
    define_base_flags()
    flags.FLAGS(argv, known_only=True)           # --paper first: it decides the other flags
    paper = flags.FLAGS.paper
    known = papers()
    if paper is not None and paper not in known:
        raise SystemExit(f"--paper={paper}: not one of {', '.join(known)}")
    module, extra = define_flags(paper) if paper else (None, {})

    def run(_):
        if module is None:
            raise SystemExit(f"--paper is required: one of {', '.join(known)}")
        try:
            text = block(module, flags.FLAGS.workdir, {k: f.value for k, f in extra.items()}, paper)
            if flags.FLAGS.readme:
                report.splice(flags.FLAGS.readme, flags.FLAGS.tag, text)
        except (FileNotFoundError, ValueError) as err:
            raise SystemExit(str(err)) from None
        print(text)

    app.run(run, argv)


if __name__ == "__main__":
    main(sys.argv)
