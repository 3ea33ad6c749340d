"""Print a GMFlow run's tables and put them into the experiment's README.

    python tools/gmflow_results.py --workdir=workdirs/gmflow_quick \
        --readme=experiments/gmflow/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/gmflow/main.py), prints the targets,
the toy and digits tables (the same as `<workdir>/results.md`) with the machine line and
the training budget, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.common import workdir as wd
from lib.gmflow.report import markdown, splice

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/gmflow_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/gmflow/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    text = (f"{markdown(results)}\n\nConfig `{config['tag']}`: "
            f"{results['budget']['train_steps_per_model']} training steps per model; measured on "
            f"{results['machine']} (shared with other jobs) in {results['wall_s']:.0f} s.")
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
