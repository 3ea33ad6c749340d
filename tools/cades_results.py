"""Print a CADES run's tables and put them into the experiment's README.

    python tools/cades_results.py --workdir=workdirs/cades_quick \
        --readme=experiments/cades/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/cades/main.py), recomputes the
per-family summaries and the targets from the raw AUROC and FPR numbers stored there
(`lib.cades.report.resummarise`), prints the markdown tables with the machine line, and
with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

from lib.cades import report
from lib.common.report import results_tool


def render(results: dict, config: dict) -> str:
    results = report.resummarise(results)
    walls = ", ".join(f"{k} {v['wall_s']:.0f} s" for k, v in results["parts"].items())
    return (f"{report.tables(results)}\n\nConfig `{config['tag']}`; measured on "
            f"{results['machine']} in {results['wall_s']:.0f} s ({walls}; model fitting "
            f"{results.get('models_wall_s', 0):.0f} s), on a CPU shared with other jobs.")


if __name__ == "__main__":
    results_tool("cades", render)
