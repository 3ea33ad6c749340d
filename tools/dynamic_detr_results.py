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
from lib.dynamic_detr.reporting import seed_table, tables, targets

SEEDS = flags.DEFINE_list("seed_workdirs", None, "Workdirs of repeats of the same config (e.g. "
                          "other train.seed): appends the AP of every variant across --workdir "
                          "and these, and how many runs meet each target.")


def render(results: dict, config: dict) -> str:
    # the targets are re-derived from the rows with the run's configured budgets and
    # ablations, so that an incomplete run lists what was not measured
    sparse = config["sparse"]
    results = {**results, "targets": targets(results["rows"], tuple(sparse["budgets"]),
                                             tuple(sparse["ablations"]))}
    text = (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {results['machine']} "
            f"in {results['wall_s'] / 60:.1f} min (a device shared with other jobs).")
    if SEEDS.value:
        runs = [(f"seed {config['train']['seed']}", results)]
        for w in SEEDS.value:
            runs.append((f"seed {wd.read_json(os.path.join(w, wd.CONFIG))['train']['seed']}",
                         wd.read_json(os.path.join(w, wd.RESULTS))))
        text += "\n\nAP across runs:\n\n" + seed_table(runs)
    return text


if __name__ == "__main__":
    results_tool("dynamic_detr", render)
