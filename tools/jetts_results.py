"""Splice a JETTS run's measured tables into a README (between results:TAG markers).

    python tools/jetts_results.py --workdir=workdirs/jetts_quick \
        --readme=experiments/jetts/README.md --tag=quick

Reads <workdir>/results.json (written by experiments/jetts/main.py) and writes the tables
of lib/jetts/report.py, with the run's config tag, into the README; nothing is typed by hand.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common import report as common_report  # noqa: E402
from lib.common import workdir as wd  # noqa: E402
from lib.jetts import report  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--readme", default="experiments/jetts/README.md")
    ap.add_argument("--tag", default="quick")
    args = ap.parse_args(argv)
    path = os.path.join(args.workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"{path} does not exist; run experiments/jetts/main.py first")
    results = wd.read_json(path)
    text = f"Run `{results['tag']}` (workdir `{args.workdir}`).\n\n" + report.results_markdown(results)
    common_report.splice(args.readme, args.tag, text)
    print(f"spliced {args.tag} into {args.readme}")


if __name__ == "__main__":
    main()
