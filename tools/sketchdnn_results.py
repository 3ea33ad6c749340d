"""Print a SketchDNN run's tables and put them into the experiment's README.

    python tools/sketchdnn_results.py --workdir=workdirs/sketchdnn_quick \
        --readme=experiments/sketchdnn/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/sketchdnn/main.py), prints the model
table and the targets (the same as `<workdir>/results.md`) with the machine line and the
budget, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.common import report
from lib.common import workdir as wd
from lib.sketchdnn.report import markdown

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/sketchdnn_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/sketchdnn/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    b = results["budget"]
    text = (f"{markdown(results)}\n\nConfig `{config['tag']}`: {b['train_steps_per_model']} "
            f"training steps per model (batch {config['optim']['batch_size']}, width "
            f"{config['model']['width']}, depth {config['model']['depth']}), "
            f"{results['data']['num_train']} training sketches in "
            f"{results['data']['num_slots']} slots; measured on {results['machine']} "
            f"(shared with other jobs) in {results['wall_s']:.0f} s.")
    if _README.value:
        report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
