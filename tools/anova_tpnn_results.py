"""Print an ANOVA-TPNN run's tables and put them into the experiment's README.

    python tools/anova_tpnn_results.py --workdir=workdirs/anova_tpnn_quick \
        --readme=experiments/anova_tpnn/README.md --tag=quick

Reads `<workdir>/results.json` and `config.json` (written by experiments/anova_tpnn/main.py,
after every data set; `complete` is False until the last one), prints the markdown tables
and the target summary (MET / MISSED with the numbers) with the machine line — headed
"Partial run" for an unfinished run —, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.

`--more_workdirs` lists further comma-separated workdirs of the same variant run on other
data sets, models or replica modes (e.g. one process per group, `--config.datasets=...`):
their entries are merged with `--workdir`'s (a model present in two workdirs must have the
same metric: the same run restored), the targets recomputed over all of them, and with
`--merged_out=DIR` the merged results.json is written there. Configs that differ in
anything but `datasets`, `models` and `replicas.modes` are refused.
"""
from __future__ import annotations

import os

from absl import flags

from lib.anova_tpnn import report
from lib.common import workdir as wd
from lib.common.report import results_tool

_MORE = flags.DEFINE_string("more_workdirs", "", "Further run directories, comma-separated, "
                            "merged with --workdir.")
_MERGED = flags.DEFINE_string("merged_out", None, "Write the merged results.json here.")


def _load(workdir: str) -> tuple[str, dict, dict]:
    path = os.path.join(workdir, wd.RESULTS)
    if not os.path.exists(path):
        raise SystemExit(f"no {path}; run experiments/anova_tpnn/main.py first")
    return workdir, wd.read_json(path), wd.read_json(os.path.join(workdir, wd.CONFIG))


def render(results: dict, config: dict) -> str:
    more = tuple(_load(w) for w in _MORE.value.split(",") if w)
    if _MERGED.value:
        merged, _ = report.merge([("--workdir", results, config), *more])
        wd.write_json_atomic(os.path.join(_MERGED.value, wd.RESULTS), merged)
    return report.render(results, config, more)


if __name__ == "__main__":
    results_tool("anova_tpnn", render)
