"""Print a risk-IRL run's tables and put them into the experiment's README.

    python tools/risk_irl_results.py --workdir=workdirs/risk_irl_quick_humans \
        --readme=experiments/risk_irl/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/risk_irl/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the targets and the machine line, and with
`--readme` replaces the text between `<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`.
"""
from __future__ import annotations

import json
import os

from absl import app, flags

from lib.common import workdir as wd
from lib.risk_irl.report import splice, tables

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/risk_irl_quick_humans", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/risk_irl/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    walls = ", ".join(f"{k} {v:.0f} s" for k, v in results["parts_wall_s"].items())
    text = (f"{tables(results)}\n\nTargets: `{json.dumps(results['targets'])}`\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']}; parts took {walls} "
            "(wall clock on a shared, heavily loaded machine).")
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
