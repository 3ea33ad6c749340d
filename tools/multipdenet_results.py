"""Collect the MultiPDENet sweep's results.json files into one table and one figure per system.

    python tools/multipdenet_results.py --root=workdirs/multipdenet --variant=quick \
        --out=experiments/multipdenet/results_quick

Writes `<out>.md` (a markdown table: model × system × RMSE, MAE, MNAD, HCT with their
spread over the test trajectories), `<out>.json` (the same numbers) and, per system,
`<out>_correlation_<system>.png` (correlation against time of every model). With
`--readme=experiments/multipdenet/README.md` the table also replaces the text between
`<!-- results:<variant>:begin -->` and `<!-- results:<variant>:end -->` there.
"""
from __future__ import annotations

import os
import platform

from absl import app, flags

from lib.common import workdir as wd
from lib.multipdenet.report import collect, correlation_plots, splice, table

_ROOT = flags.DEFINE_string("root", "workdirs/multipdenet", "Sweep root (see multipdenet_sweep.py).")
_VARIANT = flags.DEFINE_string("variant", "quick", "Config variant of the runs to collect.")
_OUT = flags.DEFINE_string("out", "experiments/multipdenet/results_quick", "Output path prefix.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the table.")

def main(_):
    results = collect(_ROOT.value, _VARIANT.value)
    if not results:
        raise SystemExit(f"no results.json under {_ROOT.value}/*_{_VARIANT.value}/*/")
    md = table(results)
    machine = (f"Measured on {platform.machine()} with {os.cpu_count()} CPU cores "
               f"({next(iter(next(iter(results.values())).values()))['device']}).")
    text = f"{md}\n\n{machine}"
    with open(f"{_OUT.value}.md", "w") as f:
        f.write(text + "\n")
    wd.write_json_atomic(f"{_OUT.value}.json", results)
    plots = correlation_plots(results, _OUT.value)
    if _README.value:
        splice(_README.value, _VARIANT.value, text)
    print(text)
    print("\n".join(plots))


if __name__ == "__main__":
    app.run(main)
