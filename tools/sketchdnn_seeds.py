"""Tabulate a SketchDNN config run over several training seeds and splice it into the README.

    python tools/sketchdnn_seeds.py \
        --workdirs=workdirs/sketchdnn/official_s0,workdirs/sketchdnn/official_s1,workdirs/sketchdnn/official_s2 \
        --readme=experiments/sketchdnn/README.md --tag=official

Each workdir is one run of experiments/sketchdnn/main.py with the same config except
`train.seed`. Prints the mean ± std table over seeds, the claims ranked only where the
models are more than 2 seed standard deviations apart, and the FD / dangling-end curves
(lib/sketchdnn/seeds.py); with --readme replaces the block `tag` there.
"""
from __future__ import annotations

import json
import os
import sys

from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib, report
from lib.sketchdnn import config_schema, seeds

WORKDIRS = flags.DEFINE_list("workdirs", None, "Run directories, one per training seed.")
README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
TAG = flags.DEFINE_string("tag", "official", "Name of the marked block in --readme.")


def _read(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def _load(workdir: str) -> tuple[dict | None, dict]:
    """(results.json or None when the run has not finished, config.json with keys recorded
    under an old name read as their new one)."""
    config = os.path.join(workdir, "config.json")
    if not os.path.exists(config):
        sys.exit(f"{config} is missing: run experiments/sketchdnn/main.py with "
                 f"--workdir={workdir} first")
    results = os.path.join(workdir, "results.json")
    config, _ = config_lib.rename_keys(_read(config), config_schema.RENAMED_KEYS)
    return (_read(results) if os.path.exists(results) else None), config


def _partial(workdir: str, config: dict) -> dict:
    """The curves an unfinished run has recorded (models/<run>/curve.json)."""
    runs = {}
    for run in config["runs"]:
        path = os.path.join(workdir, "models", run, "curve.json")
        if os.path.exists(path):
            curve = _read(path)
            runs[run] = {"curve": [{"step": int(k), **curve[k]} for k in sorted(curve, key=int)]}
    return {"runs": runs}


def render(loaded: list[tuple[dict | None, dict]], workdirs: list[str]) -> str:
    configs = [c for _, c in loaded]
    strip = [{k: v for k, v in c.items() if k != "train"} for c in configs]
    if any(s != strip[0] for s in strip):
        raise ValueError("the workdirs' configs differ outside the train block; "
                         "vary only train.seed")
    c, o = configs[0], configs[0]["optim"]
    setup = (f"Config `{c['tag']}`: {c['train']['num_steps']} training steps per model "
             f"(batch {o['batch_size']}, Adam {o['lr']:g} {o['schedule']}, clip "
             f"{o['clip']:g}, EMA {o['ema_decay']:g}; CE mean over "
             f"{c['loss']['ce_mean'].replace('_', ' ')}; x̂₀ logits "
             f"{c['diffusion']['x0_logits']}), width {c['model']['width']}, depth "
             f"{c['model']['depth']}")
    if any(r is None for r, _ in loaded):
        partial = [r if r is not None else _partial(w, cf)
                   for (r, cf), w in zip(loaded, workdirs)]
        done = sum(r is not None for r, _ in loaded)
        curves = seeds.curve_markdown(partial, c["eval"].get("curve_samples", 0))
        return (f"**Unfinished**: {done} of {len(loaded)} seeds reached the final evaluation; "
                f"the curves recorded so far:\n\n{curves or '(none yet)'}\n\n{setup}; seeds "
                f"(train.seed) {', '.join(str(cf['train']['seed']) for cf in configs)}.")
    results = [r for r, _ in loaded]
    table = seeds.markdown(results, [cf["train"]["seed"] for cf in configs],
                           curve_samples=c["eval"].get("curve_samples", 0))
    walls = " / ".join(f"{r['wall_s']:.0f}" for r in results)
    return (f"{table}\n\n{setup}; {results[0]['budget']['num_samples']} samples per model "
            f"({results[0]['budget']['sample_steps']} of T = "
            f"{results[0]['budget']['diffusion_steps']} reverse steps); measured on "
            f"{results[0]['machine']}; wall time per seed's run (encoder, models, "
            f"evaluation) {walls} s.")


def main(_):
    if not WORKDIRS.value:
        sys.exit("--workdirs: give the run directories, comma-separated")
    text = render([_load(w) for w in WORKDIRS.value], WORKDIRS.value)
    if README.value:
        report.splice(README.value, TAG.value, text)
    print(text)


if __name__ == "__main__":
    run_tool(main)
