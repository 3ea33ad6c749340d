"""Render a SWE-Gym run's results.json as the README's results block.

    python tools/swe_gym_results.py --workdir=workdirs/swe_gym_quick \
        --readme=experiments/swe_gym/README.md --tag=quick

Replaces the text between `<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`
(lib.common.report.splice); without --readme the table is printed.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from experiments.swe_gym.train import results_table  # noqa: E402
from lib.common import report  # noqa: E402
from lib.common import workdir as wd  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--readme", default="")
    ap.add_argument("--tag", default="quick")
    args = ap.parse_args(argv)
    path = os.path.join(args.workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"{path} does not exist; run experiments/swe_gym/main.py first")
    text = results_table(wd.read_json(path))
    if args.readme:
        report.splice(args.readme, args.tag, text)
        print(f"spliced results:{args.tag} into {args.readme}")
    else:
        print(text)


if __name__ == "__main__":
    main()
