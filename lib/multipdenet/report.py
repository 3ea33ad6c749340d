"""Results of a MultiPDENet sweep: collect results.json files, tabulate, plot.

`write_collection(root, variant)` stores `{system: {run: results.json}}` of a sweep as
`<root>/collected_<variant>/results.json` (with a config.json naming the sweep and the
machine), the folder `tools/multipdenet_results.py` renders through `results_tool`.
"""
from __future__ import annotations

import glob
import os
import platform

import numpy as np

from lib.common import plotting, workdir as wd

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
    device = next(iter(next(iter(results.values())).values()))["device"]
    machine = f"Measured on {platform.machine()} with {os.cpu_count()} CPU cores ({device})."
    folder = os.path.join(root, f"collected_{variant}")
    wd.write_json_atomic(os.path.join(folder, wd.RESULTS), results)
    wd.write_json_atomic(os.path.join(folder, wd.CONFIG),
                         {"tag": variant, "root": root, "machine": machine})
    return folder


def render(results: dict[str, dict[str, dict]], config: dict) -> str:
    """The README block of a collected sweep: the table and the machine line."""
    return f"{table(results)}\n\n{config['machine']}"


def _fmt(pair) -> str:
    mean, std = pair
    if mean is None or not np.isfinite(mean):
        return "diverged"
    return f"{mean:.3g} ± {std:.2g}"


def table(results: dict[str, dict[str, dict]]) -> str:
    lines = ["| system | model | RMSE | MAE | MNAD | HCT (time units) | horizon | HCT / best baseline HCT | params | train steps | train wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for system in sorted(results):
        runs = results[system]
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
    for system, runs in sorted(results.items()):
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
