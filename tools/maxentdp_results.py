"""Print a MaxEntDP run's tables and put them, with the plots' paths, into the README.

    python tools/maxentdp_results.py --workdir=workdirs/maxentdp_quick \
        --readme=experiments/maxentdp/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/maxentdp/main.py), renders the
returns / multi-goal / targets tables (`lib.maxentdp.report.tables`) with the machine line
and the return curves per environment (mean of the seeds at each evaluation), and with
`--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.
"""
from __future__ import annotations

import os

from absl import flags

from lib.common.report import cell, results_tool
from lib.maxentdp.report import tables


def curves(results: dict) -> str:
    """Evaluation return (mean ± sd over seeds) at every evaluation, one row per run."""
    lines = []
    for r in results["runs"].values():
        sd = r["eval_return_std"] or [0.0] * len(r["eval_return_mean"])
        pts = ", ".join(f"{s}: {cell(m, 0, 'f')} ± {cell(d, 0, 'f')}"
                        for s, m, d in zip(r["env_steps"], r["eval_return_mean"], sd))
        lines.append(f"- {r['env']} / {r['algo']}: {pts}")
    return "Return curves (environment steps: mean ± sd over seeds):\n\n" + "\n".join(lines)


def render(results: dict, config: dict) -> str:
    workdir = flags.FLAGS.workdir                 # the plots' paths are given relative to it
    plots = ", ".join(f"`{os.path.relpath(p, workdir)}`" for p in results.get("plots", []))
    return (f"{tables(results)}\n\n{curves(results)}\n\nPlots in the workdir: {plots}.\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} "
            f"(shared with other jobs) in {results['wall_s']:.0f} s "
            "(env steps/s: after compilation, all seeds together).")


if __name__ == "__main__":
    results_tool("maxentdp", render)
