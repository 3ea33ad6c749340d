"""Print a CADES run's tables and put them into the experiment's README.

    python tools/cades_results.py --workdir=workdirs/cades_quick \
        --readme=experiments/cades/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cades/main.py), recomputes the
per-family summaries and the targets from the raw AUROC and FPR numbers stored there
(`lib.cades.report.resummarise`), prints the markdown tables with the machine line, and
with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.cades import report
from lib.common import report as common_report, workdir as wd

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/cades_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/cades/main.py first")
    results = report.resummarise(wd.read_json(path))
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    walls = ", ".join(f"{k} {v['wall_s']:.0f} s" for k, v in results["parts"].items())
    text = (f"{report.tables(results)}\n\nConfig `{config['tag']}`; measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s ({walls}; model fitting "
            f"{results.get('models_wall_s', 0):.0f} s), on a CPU shared with other jobs.")
    if _README.value:
        common_report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
