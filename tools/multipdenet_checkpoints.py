"""How a MultiPDENet run's skill moved over training: at each kept checkpoint, the loss's
horizon against the benchmark's.

    python tools/multipdenet_checkpoints.py \
        --workdir=workdirs/multipdenet/navier_stokes_front_64_dt2,workdirs/multipdenet/navier_stokes_front_64_dt2_long

For each `--workdir` (every kept step, or `path@step` for one): the vorticity HCT on the
front's test ICs (`configs/pde_data/navier_stokes.py:front`, seed 1, as
tools/bench/multipdenet_front.py computes it), IC by IC against the first checkpoint
listed (or `--reference`), and the velocity RMSE of rollouts of the run's own training and
test trajectories over its longest training window and over the whole trajectory (a fit
that improves only at the window is a loss whose horizon is not the metric's). Writes
`--out` (JSON) and a markdown table beside it (and with `--readme` into that file's
`checkpoints` block). Accuracy only: nothing is timed.
"""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

from lib.common.cli import run_tool
from lib.common import config as config_lib, report, workdir as wd
from lib.common.checkpoint import Checkpointer
from lib.multipdenet import data as data_lib, front
from lib.multipdenet.runs import load_run

flags.DEFINE_list("workdir", [], "Run folders (every kept checkpoint) or `folder@step`.")
flags.DEFINE_string("reference", None, "`folder@step` the paired HCT differences are taken "
                    "against (default: the first checkpoint evaluated).")
flags.DEFINE_string("data_root", "data/pde", "Where the datasets are cached.")
flags.DEFINE_enum("truth", "front", ["front", "front_tiny"], "The truth's variant of "
                  "configs/pde_data/navier_stokes.py (front_tiny: the smoke run's 2 ICs).")
flags.DEFINE_string("out", "workdirs/bench/multipdenet_checkpoints.json", "Output JSON.")
flags.DEFINE_string("readme", None, "Also splice the table into this markdown file's "
                    "`<!-- results:checkpoints:begin/end -->` block (lib.common.report.splice).")
FLAGS = flags.FLAGS


def checkpoints(spec: str) -> list[tuple[str, int]]:
    """[(folder, step)] of `folder` (its kept steps) or `folder@step`."""
    folder, _, step = spec.partition("@")
    if not os.path.isdir(os.path.join(folder, wd.CHECKPOINTS)):
        raise ValueError(f"{folder}: no {wd.CHECKPOINTS}/ folder (an exported run holds one state)")
    steps = Checkpointer(os.path.join(folder, wd.CHECKPOINTS), save_every=1).all_steps()
    if not steps or (step and int(step) not in steps):
        raise ValueError(f"{folder}: step {step or '(any)'} is not kept; kept: {steps}")
    return [(folder, int(step))] if step else [(folder, s) for s in steps]


def rollout_rmse(run, split: str, horizon: int) -> float:
    """Velocity RMSE of `horizon`-step rollouts from the first frame of every trajectory of
    the run's `split` (its own frames, strided as it trained)."""
    d = np.asarray(run.data[split])
    pred = jax.jit(run.emulator.rollout, static_argnums=2)(run.params, jnp.asarray(d[:, 0]), horizon)
    return float(np.sqrt(np.mean((np.moveaxis(np.asarray(pred), 0, 1) - d[:, 1:horizon + 1]) ** 2)))


def evaluate(folder: str, step: int, meta: dict, test: np.ndarray) -> dict:
    run = load_run(folder, FLAGS.data_root, step=step)
    fn, every = front.learned_rollout(run, meta)
    truth = front.resample(test, run.data["metadata"]["coarse_grid"])
    acc = front.rollout_accuracy(fn, run.params, truth[:, 0], truth[:, 1:], meta, "vorticity", 0.8, every)
    window, whole = int(run.config.train.window), run.data["train"].shape[1] - 1
    rmse = {f"{split}_{name}": rollout_rmse(run, split, h)
            for split in ("train", "test") for name, h in (("window", window), ("whole", whole))}
    return {"run": os.path.basename(os.path.normpath(folder)), "folder": folder, "step": step,
            "window": window, "whole": whole, "hct": acc["hct"], "hct_per_ic": acc["hct_per_ic"], **rmse}


def table(rows: list[dict], reference: str) -> str:
    lines = [f"| run | step | HCT vorticity (front ICs) | HCT − {reference}'s, IC by IC (mean ± s.e.; ICs above) "
             "| window (ΔT) | RMSE train, window | RMSE test, window | RMSE train, whole | RMSE test, whole |",
             "|---" * 9 + "|"]
    for r in rows:
        lines.append(f"| {r['run']} | {r['step']} | {r['hct']:.3g} | {r['paired_diff']:+.2f} ± "
                     f"{r['paired_se']:.2f} ({r['ics_above']} of {len(r['hct_per_ic'])}) | {r['window']} | "
                     + " | ".join(f"{r[k]:.4g}" for k in ("train_window", "test_window", "train_whole",
                                                           "test_whole")) + " |")
    return "\n".join(lines) + ("\n\nwindow: the run's longest training window; whole: its whole "
                               f"trajectories ({rows[0]['whole']} ΔT); velocity RMSE.")


def main(_):
    if not FLAGS.workdir:
        sys.exit("--workdir is required")
    try:
        cases = [c for spec in FLAGS.workdir for c in checkpoints(spec)]
        ref = checkpoints(FLAGS.reference)[0] if FLAGS.reference else cases[0]
    except ValueError as e:
        sys.exit(str(e))
    data = data_lib.load_or_generate(config_lib.load_config(f"configs/pde_data/navier_stokes.py:{FLAGS.truth}"),
                                     FLAGS.data_root)
    meta, test = data["metadata"], data["test"]
    rows = []
    for folder, step in cases:
        rows.append(evaluate(folder, step, meta, test))
        print(f"{rows[-1]['run']}@{step}: HCT {rows[-1]['hct']:.3g}", flush=True)
    ref_row = next((r for r in rows if (r["folder"], r["step"]) == ref), None) or evaluate(*ref, meta, test)
    for r in rows:
        r |= front.paired_stats(r["hct_per_ic"], ref_row["hct_per_ic"])
    wd.write_json_atomic(FLAGS.out, {"reference": f"{ref_row['run']}@{ref[1]}", "rows": rows})
    md = table(rows, f"{ref_row['run']}@{ref[1]}")
    wd.write_text_atomic(os.path.splitext(FLAGS.out)[0] + ".md", md + "\n")
    if FLAGS.readme:
        report.splice(FLAGS.readme, "checkpoints", md)
    print(md)


if __name__ == "__main__":
    run_tool(main)
