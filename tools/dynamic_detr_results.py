"""Print a dynamic_detr run's AP / FLOPs / throughput table and targets, and splice it into the README.

    python tools/dynamic_detr_results.py --workdir=workdirs/dynamic_detr_quick \
        --readme=experiments/dynamic_detr/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/dynamic_detr/main.py, which also
draws `<workdir>/plots/ap_vs_flops.png`) and replaces the README block between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->`.
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.dynamic_detr.reporting import tables


def render(results: dict, config: dict) -> str:
    return (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {results['machine']} "
            f"in {results['wall_s'] / 60:.0f} min (shared machine, several jobs at once).")


if __name__ == "__main__":
    results_tool("dynamic_detr", render)
