"""Print a dynamic_detr run's AP / FLOPs / throughput table and targets, and splice it into the README.

    python tools/dynamic_detr_results.py --workdir=workdirs/dynamic_detr_quick \
        --readme=experiments/dynamic_detr/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/dynamic_detr/main.py, which also
draws `<workdir>/plots/ap_vs_flops.png`) and replaces the README block between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`. With
`--seed_workdirs=W1,W2` (repeats of the same config) it appends each variant's AP across
the runs and how many of them meet each target.
"""
from __future__ import annotations

import os

from absl import flags

from lib.common import workdir as wd
from lib.common.report import results_tool
from lib.dynamic_detr import report

SEEDS = flags.DEFINE_list("seed_workdirs", None, "Workdirs of repeats of the same config (e.g. "
                          "other train.seed): appends the AP of every variant across --workdir "
                          "and these, and how many runs meet each target.")


def render(results: dict, config: dict) -> str:
    seed_runs = [(f"seed {wd.read_json(os.path.join(w, wd.CONFIG))['train']['seed']}",
                  wd.read_json(os.path.join(w, wd.RESULTS))) for w in SEEDS.value or ()]
    return report.render(results, config, seed_runs)


if __name__ == "__main__":
    results_tool("dynamic_detr", render)
