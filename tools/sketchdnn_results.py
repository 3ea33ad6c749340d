"""Print a SketchDNN run's tables and put them into the experiment's README.

    python tools/sketchdnn_results.py --workdir=workdirs/sketchdnn_quick \
        --readme=experiments/sketchdnn/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/sketchdnn/main.py), prints the model
table and the targets (the same as `<workdir>/results.md`) with the machine line and the
budget, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.sketchdnn.report import markdown


def render(results: dict, config: dict) -> str:
    b = results["budget"]
    return (f"{markdown(results)}\n\nConfig `{config['tag']}`: {b['train_steps_per_model']} "
            f"training steps per model (batch {config['optim']['batch_size']}, width "
            f"{config['model']['width']}, depth {config['model']['depth']}), "
            f"{results['data']['num_train']} training sketches in "
            f"{results['data']['num_slots']} slots; measured on {results['machine']} "
            f"(shared with other jobs) in {results['wall_s']:.0f} s.")


if __name__ == "__main__":
    results_tool("sketchdnn", render)
