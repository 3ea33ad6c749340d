"""Print a dynamic_detr run's AP / FLOPs / throughput table and targets, and splice it into the README.

    python tools/dynamic_detr_results.py --workdir=workdirs/dynamic_detr_quick \
        --readme=experiments/dynamic_detr/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/dynamic_detr/main.py, which also
draws `<workdir>/plots/ap_vs_flops.png`) and replaces the README block between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.dynamic_detr.reporting import tables, targets


def render(results: dict, config: dict) -> str:
    # the targets are re-derived from the rows with the run's configured budgets and
    # ablations, so that an incomplete run lists what was not measured
    sparse = config["sparse"]
    results = {**results, "targets": targets(results["rows"], tuple(sparse["budgets"]),
                                             tuple(sparse["ablations"]))}
    return (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {results['machine']} "
            f"in {results['wall_s'] / 60:.1f} min (a device shared with other jobs).")


if __name__ == "__main__":
    results_tool("dynamic_detr", render)
