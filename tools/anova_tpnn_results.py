"""Print an ANOVA-TPNN run's tables and put them into the experiment's README.

    python tools/anova_tpnn_results.py --workdir=workdirs/anova_tpnn_quick \
        --readme=experiments/anova_tpnn/README.md --tag=quick

Reads `<workdir>/results.json` and `config.json` (written by experiments/anova_tpnn/main.py,
after every data set; `complete` is False until the last one), prints the markdown tables
and the target summary (MET / MISSED with the numbers) with the machine line — headed
"Partial run" for an unfinished run —, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there.

`--workdir` may list several comma-separated workdirs of the same variant run on different
data sets, models or replica modes (e.g. one process per group, `--config.datasets=...`,
`--config.models=...`, `--config.replicas.modes=...`): their entries are merged (a model present in two workdirs must
have the same metric: the same run restored), the targets recomputed over all of them, and
with `--merged_out=DIR` the merged results.json is written there. Configs that differ in
anything but `datasets`, `models` and `replicas.modes` are refused.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.anova_tpnn.report import tables, targets
from lib.common import workdir as wd
from lib.common.report import splice

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/anova_tpnn_quick",
                               "Run directory, or several separated by commas.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")
_MERGED = flags.DEFINE_string("merged_out", None, "Write the merged results.json here.")


def merge(workdirs: list[str]) -> tuple[dict, dict]:
    """(results, config) over all workdirs; ValueError for mismatched configs or overlaps."""
    results, config = {"datasets": {}}, None
    walls, machines, complete = [], [], []
    for w in workdirs:
        path = os.path.join(w, wd.RESULTS)
        if not os.path.exists(path):
            raise SystemExit(f"no {path}; run experiments/anova_tpnn/main.py first")
        r, c = wd.read_json(path), wd.read_json(os.path.join(w, wd.CONFIG))
        rest = {k: v for k, v in c.items() if k not in ("datasets", "models")}
        rest["replicas"] = {k: v for k, v in rest["replicas"].items() if k != "modes"}
        if config is not None and rest != config:
            raise ValueError(f"{w}: config differs from {workdirs[0]} beyond datasets/models/"
                             "replica modes")
        config = rest
        for name, entry in r["datasets"].items():
            if name not in results["datasets"]:
                results["datasets"][name] = entry
                continue
            for mode, models in entry["modes"].items():       # same set, other models
                have = results["datasets"][name]["modes"].setdefault(mode, {})
                for model, summary in models.items():
                    if model in have and have[model]["metric"] != summary["metric"]:
                        raise ValueError(f"{name}/{mode}/{model} differs between workdirs")
                    have[model] = summary
        walls.append(r["wall_s"])
        complete.append(r.get("complete", True))
        machines.append(r["machine"])
    results["targets"] = targets(results)
    results["complete"] = all(complete)
    results["machine"] = machines[0]
    results["wall_s"] = max(walls)
    results["wall_s_per_workdir"] = walls
    return results, config


def main(_):
    workdirs = [w for w in _WORKDIR.value.split(",") if w]
    results, config = merge(workdirs)
    walls = ", ".join(f"{w / 60:.0f}" for w in results["wall_s_per_workdir"])
    partial = ("" if results["complete"] else
               "**Partial run**: the workdir's results.json says data sets of the config are "
               "still to come; only the data sets in the tables below were run.\n\n")
    ebm = (f"on, seeds only, {config['ebm']['num_replicas']} replicas"
           if config["ebm"]["enabled"] else "off")
    select = (f"each replica's params selected at its best validation loss, checked every "
              f"{config['eval']['val_every']} steps"
              if config["data"].get("val_fraction", 0) > 0 else "no validation split: last step")
    text = (f"{partial}{tables(results)}\n\nConfig `{config['tag']}` (EBM {ebm}; "
            f"{select}); measured on "
            f"{results['machine']}; wall time per process {walls} min ({len(workdirs)} "
            f"process{'es' if len(workdirs) > 1 else ''}, shared machine).")
    if _MERGED.value:
        wd.write_json_atomic(os.path.join(_MERGED.value, wd.RESULTS), results)
    if _README.value:
        splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
