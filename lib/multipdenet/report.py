"""Results of a MultiPDENet sweep: collect results.json files, tabulate, plot, targets.

`write_collection(root, variant)` stores `{system: {run: results.json}}` of a sweep, and
its `targets`, as `<root>/collected_<variant>/results.json` (with a config.json naming the
sweep and the machine), the folder `tools/results.py --paper=multipdenet` renders
(`results_block`). The front's targets are `lib.multipdenet.front.targets`.
"""
from __future__ import annotations

import glob
import os
import platform

import numpy as np

from lib.common import report, workdir as wd
from lib.toolbox import plotting

ORDER = ["multipdenet", "coarse_solver", "fno", "unet", "abl_frozen_filters", "abl_free_filters",
         "abl_no_minn", "abl_no_mann", "abl_euler", "abl_no_corrector"]


def collect(root: str, variant: str) -> dict[str, dict[str, dict]]:
    """{system: {run name: results}} for every finished run under `root`."""
    out: dict[str, dict[str, dict]] = {}
    for path in sorted(glob.glob(os.path.join(root, f"*_{variant}", "*", wd.RESULTS))):
        run = os.path.basename(os.path.dirname(path))
        system = os.path.basename(os.path.dirname(os.path.dirname(path)))[: -len(variant) - 1]
        out.setdefault(system, {})[run] = wd.read_json(path)
    return out


def write_collection(root: str, variant: str) -> str | None:
    """Collect the sweep under `root` into `<root>/collected_<variant>/`; its path, or None
    when no run has finished."""
    results = collect(root, variant)
    if not results:
        return None
    results["targets"] = targets(results)
    device = next(iter(next(iter(systems(results).values())).values()))["device"]
    machine = f"Measured on {platform.machine()} with {report.cores_text()} ({device})."
    folder = os.path.join(root, f"collected_{variant}")
    wd.write_json_atomic(os.path.join(folder, wd.RESULTS), results)
    wd.write_json_atomic(os.path.join(folder, wd.CONFIG),
                         {"tag": variant, "root": root, "machine": machine})
    return folder


def systems(results: dict) -> dict[str, dict[str, dict]]:
    """`{system: {run: results}}` of a collection (without its "targets")."""
    return {k: v for k, v in results.items() if k != "targets"}


# The quick sweep's targets: MultiPDENet's mean HCT over the named baselines' (ratio >= bound;
# bound 1: strictly above). On Burgers and Gray–Scott the paper's ordering: above all three.
TARGETS = {"navier_stokes": {"fno": 1.5, "unet": 1.5, "coarse_solver": 1.0},
           "burgers": {"coarse_solver": 1.0, "fno": 1.0, "unet": 1.0},
           "gray_scott": {"coarse_solver": 1.0, "fno": 1.0, "unet": 1.0}}


def targets(results: dict) -> dict:
    """`{system: {"vs_<baseline>": record}}` for the systems and baselines of `TARGETS` that
    the collection holds; each record has MultiPDENet's and the baseline's HCT, the ratio
    and the bound (met: ratio ≥ bound, and > 1 when the bound is 1)."""
    out = {}
    for system, bounds in TARGETS.items():
        runs = systems(results).get(system, {})
        if "multipdenet" not in runs:
            continue
        m = runs["multipdenet"]["hct"][0]
        out[system] = {f"vs_{b}": report.target(
            m / runs[b]["hct"][0] >= bound and m > runs[b]["hct"][0], hct=m,
            baseline_hct=runs[b]["hct"][0], ratio=m / runs[b]["hct"][0], bound=bound)
            for b, bound in bounds.items() if b in runs}
    return out


def targets_table(records: dict) -> str:
    lines = ["| target | MultiPDENet HCT / baseline HCT | verdict |", "|---|---|---|"]
    for system, recs in records.items():
        for key, t in recs.items():
            lines.append(f"| {system}: HCT {'≥ %g×' % t['bound'] if t['bound'] > 1 else 'above'} "
                         f"{key[3:]}'s | {t['hct']:.4g} / {t['baseline_hct']:.4g} = "
                         f"{t['ratio']:.2f}× | {report.verdict(t).lower()} |")
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    """The README block of a collected sweep: the table, its targets and the machine line."""
    return f"{table(results)}\n\n{targets_table(targets(results))}\n\n{config['machine']}"


def _fmt(pair) -> str:
    mean, std = pair
    if mean is None or not np.isfinite(mean):
        return "diverged"
    return f"{mean:.3g} ± {std:.2g}"


def table(results: dict[str, dict[str, dict]]) -> str:
    lines = ["| system | model | RMSE | MAE | MNAD | HCT (time units) | horizon | HCT / best baseline HCT | params | train steps | train wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for system, runs in sorted(systems(results).items()):
        baselines = [runs[b]["hct"][0] for b in ("coarse_solver", "fno", "unet") if b in runs]
        best = max(baselines) if baselines else None
        for name in sorted(runs, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
            r = runs[name]
            ratio = f"{r['hct'][0] / best:.2f}" if best else "—"
            lines.append(
                f"| {system} | {name} | {_fmt(r['rmse'])} | {_fmt(r['mae'])} | {_fmt(r['mnad'])} | "
                f"{_fmt(r['hct'])} | {r['horizon']:.3g} | {ratio} | {r['n_params']} | "
                f"{r['train_steps']} | {r['train_wall_s']:.0f} |")
    return "\n".join(lines)


def correlation_plots(results, prefix: str, threshold: float = 0.8) -> list[str]:
    """One figure per system: MultiPDENet bold, ablations dashed, ±1 std bands where the run
    stored `correlation_std`, the HCT threshold labelled."""
    paths = []
    for system, runs in sorted(systems(results).items()):
        curves = {}
        for name in sorted(runs, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
            r = runs[name]
            t = (np.arange(len(r["correlation_mean"])) + 1) * r["frame_dt"]
            curves[name] = (t, r["correlation_mean"], r.get("correlation_std"))
        paths.append(plotting.correlation_curves(
            f"{prefix}_correlation_{system}.png", curves, highlight="multipdenet",
            dashed=[n for n in curves if n.startswith("abl_")], threshold=threshold,
            ylabel="correlation (mean over test)", title=f"{system}: correlation with the truth"))
    return paths


RESULTS_WORKDIR = "workdirs/multipdenet/collected_quick"
RESULTS_FLAGS = {"out": ("string", "experiments/multipdenet/results_quick", "Output path prefix.")}


def results_block(results: dict, config: dict, workdir: str, out: str) -> str:
    """`render` of a collected sweep, also written to `<out>.md` with the collection as
    `<out>.json` and, per system, `<out>_correlation_<system>.png` (their paths printed)."""
    del workdir
    text = render(results, config)
    with open(f"{out}.md", "w") as f:
        f.write(text + "\n")
    wd.write_json_atomic(f"{out}.json", results)
    print("\n".join(correlation_plots(results, out)))
    return text
