"""Export a trained MultiPDENet run as a small folder that can be committed: config.json,
results.json, params.npz (the trained weights) and reference.npz (the first test IC and the
model's rollout from it, which `tests/multipdenet/test_multipdenet_trained.py` reproduces).

    python tools/multipdenet_export.py \
        --workdir=workdirs/multipdenet/navier_stokes_front --out=experiments/multipdenet/trained/front_32

`lib.multipdenet.runs.load_run(out)` then loads it without its dataset (notebooks, the
front benchmark). `--out` must not exist.
"""
from __future__ import annotations

import os

from absl import flags

from lib.common.cli import run_tool
from lib.multipdenet.runs import PARAMS, export_run

_WORKDIR = flags.DEFINE_string("workdir", None, "A finished MultiPDENet run folder.", required=True)
_OUT = flags.DEFINE_string("out", None, "The folder to create.", required=True)
_FRAMES = flags.DEFINE_integer("frames", 10, "Frames of the stored reference rollout.")


def main(_):
    out = export_run(_WORKDIR.value, _OUT.value, _FRAMES.value)
    size = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{out}: {size / 1e6:.2f} MB ({PARAMS} {os.path.getsize(os.path.join(out, PARAMS)) / 1e6:.2f} MB)")


if __name__ == "__main__":
    run_tool(main)
