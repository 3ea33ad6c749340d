"""Print a JETTS run's measured tables and put them into the experiment's NOTES.md.

    python tools/jetts_results.py --workdir=workdirs/jetts_quick \
        --readme=experiments/jetts/NOTES.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/jetts/main.py), prints the tables of
lib/jetts/report.py headed by the run's config tag and workdir, and with `--readme`
replaces the text between `<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`
there; nothing is typed by hand.
"""
from __future__ import annotations

from absl import flags

from lib.common.report import results_tool
from lib.jetts import report


def render(results: dict, config: dict) -> str:
    return (f"Run `{results['tag']}` (workdir `{flags.FLAGS.workdir}`).\n\n"
            + report.results_markdown(results))


if __name__ == "__main__":
    results_tool("jetts", render)
