"""Print a latent-ATE run's tables and targets and put them into the experiment's README.

    python tools/latent_ate_results.py --workdir=workdirs/latent_ate_quick \
        --readme=experiments/latent_ate/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/latent_ate/main.py; the runs named in
`--more_workdirs`, comma-separated, e.g. one per setting run in parallel, are merged), prints
the markdown tables (as `<workdir>/results.md`), each target as MET / MISSED with its
numbers and the machine line, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there. Optionally
`--doubleml=<json>` (from tools/latent_ate_vs_doubleml.py --out) adds the agreement table.
"""
from __future__ import annotations

import os

from absl import flags

from lib.common import workdir as wd
from lib.common.report import results_tool
from lib.latent_ate import report

_MORE = flags.DEFINE_string("more_workdirs", "", "Further run directories, comma-separated, "
                            "merged with --workdir (their settings must not overlap).")
_FEATURES = flags.DEFINE_bool("features", True, "Include the adjustment-set table.")
_DOUBLEML = flags.DEFINE_string("doubleml", None, "JSON written by latent_ate_vs_doubleml.py.")


def _results(workdir: str) -> dict:
    path = os.path.join(workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/latent_ate/main.py first")
    return wd.read_json(path)


def render(results: dict, config: dict) -> str:
    more = tuple(_results(w) for w in _MORE.value.split(",") if w)
    doubleml = wd.read_json(_DOUBLEML.value) if _DOUBLEML.value else None
    try:
        return report.render(results, config, more, _FEATURES.value, doubleml)
    except ValueError as err:
        raise SystemExit(str(err)) from None


if __name__ == "__main__":
    results_tool("latent_ate", render)
