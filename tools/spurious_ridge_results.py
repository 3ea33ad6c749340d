"""Print a spurious-ridge run's tables and put them into the experiment's README.

    python tools/spurious_ridge_results.py --workdir=workdirs/spurious_ridge_quick \
        --readme=experiments/spurious_ridge/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/spurious_ridge/main.py), prints the
markdown tables (the same as `<workdir>/results.md`) with the machine line and the
targets, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import json

from lib.common.report import results_tool
from lib.spurious_ridge.report import tables


def render(results: dict, config: dict) -> str:
    return (f"{tables(results)}\n\nTargets: `{json.dumps(results['targets'])}`\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} in "
            f"{results['wall_s']:.0f} s.")


if __name__ == "__main__":
    results_tool("spurious_ridge", render)
