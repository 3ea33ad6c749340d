"""Print the MultiPDENet sweep's table, write its files and put it into the README.

    python tools/multipdenet_sweep.py --systems=burgers,navier_stokes,gray_scott,kdv --sweep=all
    python tools/multipdenet_results.py --workdir=workdirs/multipdenet/collected_quick \
        --out=experiments/multipdenet/results_quick --readme=experiments/multipdenet/README.md

Reads the sweep's collection (`<root>/collected_<variant>/`, written by the sweep tool:
results.json = {system: {run: results}}), prints the table (model × system × RMSE, MAE,
MNAD, HCT with their spread over the test trajectories) and writes `<out>.md`, `<out>.json`
and, per system, `<out>_correlation_<system>.png`. With `--readme` the table replaces the
block `<!-- results:<tag>:begin/end -->` there.
"""
from __future__ import annotations

from absl import flags

from lib.common import workdir as wd
from lib.common.report import results_tool
from lib.multipdenet import report

_OUT = flags.DEFINE_string("out", "experiments/multipdenet/results_quick", "Output path prefix.")


def render(results: dict, config: dict) -> str:
    text = report.render(results, config)
    with open(f"{_OUT.value}.md", "w") as f:
        f.write(text + "\n")
    wd.write_json_atomic(f"{_OUT.value}.json", results)
    print("\n".join(report.correlation_plots(results, _OUT.value)))
    return text


if __name__ == "__main__":
    results_tool("multipdenet", render, default_workdir="workdirs/multipdenet/collected_quick")
