"""Print a spurious-ridge run's tables and put them into the experiment's README.

    python tools/spurious_ridge_results.py --workdir=workdirs/spurious_ridge_quick \
        --readme=experiments/spurious_ridge/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/spurious_ridge/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the machine line and the
targets, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import json
import os

from absl import app, flags

from lib.common import workdir as wd
from lib.spurious_ridge.report import splice, tables

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/spurious_ridge_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/spurious_ridge/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    text = (f"{tables(results)}\n\nTargets: `{json.dumps(results['targets'])}`\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} in "
            f"{results['wall_s']:.0f} s.")
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
