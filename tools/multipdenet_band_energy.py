"""Where a Navier–Stokes rollout keeps or loses energy: the energy of each band of shells of
the rollout's spectrum over the truth's (1: the truth's energy, < 1: lost), at a few times,
averaged over the held-out ICs, for trained runs and `fd4_tuned` points on the same ICs.

    python tools/multipdenet_band_energy.py --cores=0 --classical=64:2 \
        --workdir=workdirs/multipdenet/navier_stokes_front_64_dt8_pf_fd4_m8_cnn_tuned

The truth (`--truth`, default the 30 held-out ICs of seeds 2-4) is truncated to each point's
grid; times are rounded down to a frame every run can be compared at (a multiple of 4 truth
frames). Prints a table and writes it to `--out` (markdown) when given.
"""
from __future__ import annotations

import os
import sys

from absl import flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.common.cli import run_tool
from tools.bench import pinning

flags.DEFINE_list("workdir", [], "Trained MultiPDENet run folders (Navier–Stokes).")
flags.DEFINE_list("classical", [], "fd4_tuned points as <grid>:<steps per truth frame>, e.g. 64:2.")
flags.DEFINE_list("times", ["1", "2.5", "4.5"], "Times (units) at which the spectra are compared.")
flags.DEFINE_string("truth", None, "Test ICs: heldout (default) or variants of configs/pde_data/navier_stokes.py.")
flags.DEFINE_string("data_root", "data/pde", "Where the truth datasets are cached.")
flags.DEFINE_list("cores", [pinning.FIRST], "CPU cores to pin to before JAX starts (tools/bench/pinning.py).")
flags.DEFINE_string("out", None, "Also write the table to this markdown file.")
FLAGS = flags.FLAGS
EVERY = 4   # compare at multiples of 4 truth frames (a ΔT of up to 4 frames divides it)


def main(_):
    classical_points = []
    for c in FLAGS.classical:
        try:
            n, steps = (int(x) for x in c.split(":"))
        except ValueError:
            raise SystemExit(f"--classical={c!r}: expected <grid>:<steps per truth frame>, e.g. 64:2") from None
        classical_points.append((n, steps))
    if not FLAGS.workdir and not classical_points:
        raise SystemExit("nothing to compare: give --workdir and/or --classical")
    for w in FLAGS.workdir:
        if not os.path.isdir(w):
            raise SystemExit(f"--workdir: no such folder {w}")
    try:
        pinning.pin(pinning.parse(FLAGS.cores))
    except (ValueError, RuntimeError) as e:
        raise SystemExit(f"--cores={','.join(FLAGS.cores)}: {e}") from None
    import jax.numpy as jnp
    import numpy as np
    from lib.multipdenet import attractor, classical, front, statistics
    from lib.multipdenet.runs import load_run

    meta, parts = front.load_truth(front.truth_configs("navier_stokes", False, FLAGS.truth), FLAGS.data_root)
    truth, length, fdt = np.concatenate([p for _, p in parts]), meta["length"], meta["frame_dt"]
    frames = sorted({int(float(t) / fdt) // EVERY * EVERY for t in FLAGS.times} - {0})
    k = max(frames)

    def spectrum(u):
        return attractor.energy_spectrum(front.vorticity(u, length), length).mean(0)

    rows = []
    for n, steps in classical_points:
        tr = front.resample(truth, n)
        fn, params = classical.build(meta, "fd4_tuned", n, steps)
        pred = np.asarray(fn(params, jnp.asarray(tr[:, 0]), k))      # (k, n_ics, n, n, 2)
        rows.append((f"FD4+RK4 tuned {n}² ({steps} steps/frame)", n,
                     [statistics.band_energy_ratios(spectrum(pred[f - 1]), spectrum(tr[:, f])) for f in frames]))
    for w in FLAGS.workdir:
        run = load_run(w, FLAGS.data_root)
        n = run.data["metadata"]["coarse_grid"]
        tr = front.resample(truth, n)
        fn, every = front.learned_rollout(run, meta)
        pred = np.asarray(fn(run.params, jnp.asarray(tr[:, 0]), k))   # (k // every, n_ics, ...)
        rows.append((os.path.basename(w.rstrip("/")), n,
                     [statistics.band_energy_ratios(spectrum(pred[f // every - 1]), spectrum(tr[:, f]))
                      for f in frames]))
    bands = " / ".join(f"{a}–{b}" for a, b in statistics.BANDS)
    head = ["point", "grid"] + [f"t = {f * fdt:.2f}: E / E_truth, shells {bands}" for f in frames]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, n, per_t in rows:
        cells = [" / ".join(f"{r:.2f}" for r in ratios) for ratios in per_t]
        lines.append(f"| {name} | {n}² | " + " | ".join(cells) + " |")
    n_ics = truth.shape[0]
    text = "\n".join(lines) + f"\n\n{n_ics} ICs ({FLAGS.truth or 'heldout'}), spectra averaged over ICs.\n"
    print(text)
    if FLAGS.out:
        from lib.common import workdir as wd
        wd.write_text_atomic(FLAGS.out, text)


if __name__ == "__main__":
    run_tool(main)
