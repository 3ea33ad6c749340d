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

from absl import app, flags

from lib.common import report as common_report, workdir as wd
from lib.common.report import cell
from lib.maxentdp.report import tables

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/maxentdp_quick", "Run directory.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")


def curves(results: dict) -> str:
    """Evaluation return (mean ± sd over seeds) at every evaluation, one row per run."""
    lines = []
    for r in results["runs"].values():
        sd = r["eval_return_std"] or [0.0] * len(r["eval_return_mean"])
        pts = ", ".join(f"{s}: {cell(m, 0, 'f')} ± {cell(d, 0, 'f')}"
                        for s, m, d in zip(r["env_steps"], r["eval_return_mean"], sd))
        lines.append(f"- {r['env']} / {r['algo']}: {pts}")
    return "Return curves (environment steps: mean ± sd over seeds):\n\n" + "\n".join(lines)


def main(_):
    path = os.path.join(_WORKDIR.value, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/maxentdp/main.py first")
    results = wd.read_json(path)
    config = wd.read_json(os.path.join(_WORKDIR.value, wd.CONFIG))
    plots = ", ".join(f"`{os.path.relpath(p, _WORKDIR.value)}`" for p in results.get("plots", []))
    text = (f"{tables(results)}\n\n{curves(results)}\n\nPlots in the workdir: {plots}.\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} "
            f"(shared with other jobs) in {results['wall_s']:.0f} s "
            "(env steps/s: after compilation, all seeds together).")
    if _README.value:
        common_report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
