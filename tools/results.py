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
    def publish_results(results, config, workdir, **flags) -> dict  # what --publish writes

A refused merge, a missing file or README marker (ValueError, FileNotFoundError) stops
with its one line.

`--publish` (with `--readme` and `--tag`) also writes `results_<TAG>.json` beside the README
(atomically, after the splice, so the block and the file come from the same run): the run's
"targets" tree, its top-level scalars (machine, wall_s, ...), the config's tag, the scale
(quick / official / gpu: `--scale`, else read from the config's tag), the workdir and the
time results.json was written; a module's `publish_results` gives what is written instead of
the workdir's results (the runs a merged block joins, and their targets).
tools/results_page.py builds RESULTS.md from these files. A run without a finished
results.json (missing, "complete": false, or no "targets") is refused with one line
(exit 2) before anything is written.
"""
from __future__ import annotations

import datetime
import importlib
import os
import sys

from absl import flags

from lib.common import report, workdir as wd
from lib.common.cli import run_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = {"bool": flags.DEFINE_bool, "string": flags.DEFINE_string, "list": flags.DEFINE_list}
SCALES = ("quick", "official", "gpu")     # = tools/results_page.py's SCALES


def define_base_flags() -> None:
    """--paper, --workdir, --readme, --tag: defined when the tool runs, not at import, so that
    importing it (tests, notebooks) leaves the process's absl flags alone."""
    flags.DEFINE_string("paper", None, "Paper whose lib/<paper>/report.py renders the run.")
    flags.DEFINE_string("workdir", None, "Run directory (default: the paper's).")
    flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the text.")
    flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")
    flags.DEFINE_bool("publish", False, "Also write the run's targets and provenance to "
                      "results_<tag>.json beside --readme (for RESULTS.md).")
    flags.DEFINE_enum("scale", None, SCALES, "The published run's scale (default: 'official' "
                      "or 'gpu' when the config's tag names it, else 'quick').")


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


def block(module, workdir: str, extra: dict, experiment: str,
          results: dict | None = None) -> str:
    """The module's text of the run in `workdir` (its results.json, or `results` read from
    it already); `extra` maps flag names to values."""
    if results is None:
        results = report.read_results(workdir, experiment)
    config = wd.read_json(os.path.join(workdir, wd.CONFIG))
    if hasattr(module, "results_block"):
        return module.results_block(results, config, workdir, **extra)
    return module.render(results, config)


class Refused(Exception):
    """A run that cannot be published; the message is the one line to print."""


def finished(workdir: str, experiment: str, module=None, extra: dict | None = None
             ) -> tuple[dict, dict]:
    """(the run's results.json, the results to publish) when the run finished: the file
    exists, and the results to publish (the module's `publish_results` of it, else the file)
    do not say "complete": false and hold a "targets" tree; Refused naming the file otherwise."""
    try:
        results = report.read_results(workdir, experiment)
    except FileNotFoundError as err:
        raise Refused(f"--publish refused: {err}") from None
    out = results
    if hasattr(module, "publish_results"):
        config = wd.read_json(os.path.join(workdir, wd.CONFIG))
        try:
            out = module.publish_results(results, config, workdir, **(extra or {}))
        except (FileNotFoundError, ValueError) as err:
            raise Refused(f"--publish refused: {err}") from None
    path = os.path.join(workdir, wd.RESULTS)
    if out is not results:
        path += " (with the runs its block joins)"
    if out.get("complete") is False:
        raise Refused(f"--publish refused: {path} says the run is not complete "
                      "(\"complete\": false); rerun it to the end")
    if not isinstance(out.get("targets"), dict) or not out["targets"]:
        raise Refused(f"--publish refused: {path} has no \"targets\" tree")
    return results, out


def scale_of(config: dict) -> str:
    """'official' or 'gpu' when the config's tag names one, else 'quick'."""
    tag = str(config.get("tag", ""))
    return next((s for s in ("gpu", "official") if s in tag), "quick")


def published(results: dict, config: dict, paper: str, workdir: str, tag: str,
              scale: str | None) -> dict:
    """The results file `--publish` writes: the run's targets and top-level scalars, and
    where they came from."""
    path = os.path.join(workdir, wd.RESULTS)
    when = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
    scalars = {k: v for k, v in results.items()
               if isinstance(v, (str, int, float, bool)) or v is None}
    return {**scalars, "paper": paper, "config": config.get("tag"), "readme_tag": tag,
            "scale": scale or scale_of(config), "workdir": workdir,
            "finished": when.isoformat(timespec="seconds"), "targets": results["targets"]}


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
        fl = flags.FLAGS
        if fl.publish and not fl.readme:
            raise SystemExit("--publish needs --readme: the block and the results file are "
                             "written together")
        values = {k: f.value for k, f in extra.items()}
        try:
            results, out = (finished(fl.workdir, paper, module, values) if fl.publish
                            else (None, None))
        except Refused as err:
            print(err, file=sys.stderr)
            sys.exit(2)
        try:
            text = block(module, fl.workdir, values, paper, results)
            if fl.readme:
                report.splice(fl.readme, fl.tag, text)
        except (FileNotFoundError, ValueError) as err:
            raise SystemExit(str(err)) from None
        print(text)
        if fl.publish:
            path = os.path.join(os.path.dirname(fl.readme), f"results_{fl.tag}.json")
            config = wd.read_json(os.path.join(fl.workdir, wd.CONFIG))
            wd.write_json_atomic(path, published(out, config, paper, fl.workdir, fl.tag,
                                                 fl.scale))
            print(f"published {path}", file=sys.stderr)

    run_tool(run, argv)


if __name__ == "__main__":
    main(sys.argv)
