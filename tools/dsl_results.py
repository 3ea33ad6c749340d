"""Print a DSL run's accuracy table and targets and put them into the experiment's README.

    python tools/dsl_results.py --workdir=workdirs/dsl_quick \
        --readme=experiments/dsl/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/dsl/main.py), prints the markdown
tables (the same as `<workdir>/results.md`) with the config tag, machine line and wall time,
and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.common import workdir as wd
from lib.dsl.report import splice, tables

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/dsl_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/dsl/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    text = (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {results['machine']} "
            f"in {results['wall_s'] / 60:.0f} min (shared machine, several jobs at once).")
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
