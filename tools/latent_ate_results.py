"""Print a latent-ATE run's tables and targets and put them into the experiment's README.

    python tools/latent_ate_results.py --workdir=workdirs/latent_ate_quick \
        --readme=experiments/latent_ate/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/latent_ate/main.py; several
comma-separated workdirs, e.g. one per setting run in parallel, are merged), prints the
markdown tables (as `<workdir>/results.md`), each target as MET / MISSED with its numbers
and the machine line, and with `--readme` replaces the text between
`<!-- results:TAG:begin -->` and `<!-- results:TAG:end -->` there. Optionally
`--doubleml=<json>` (from tools/latent_ate_vs_doubleml.py --out) adds the agreement table.
"""
from __future__ import annotations

import os

from absl import app, flags

from lib.common import workdir as wd
from lib.latent_ate import report

_WORKDIR = flags.DEFINE_string("workdir", "workdirs/latent_ate_quick",
                                "Run directory, or several separated by commas.")
_README = flags.DEFINE_string("readme", None, "Markdown file whose marked block gets the tables.")
_TAG = flags.DEFINE_string("tag", "quick", "Name of the marked block in --readme.")
_FEATURES = flags.DEFINE_bool("features", True, "Include the adjustment-set table.")
_DOUBLEML = flags.DEFINE_string("doubleml", None, "JSON written by latent_ate_vs_doubleml.py.")


def target_lines(targets: dict) -> str:
    lines = ["| target | status | numbers |", "|---|---|---|"]
    for name, t in targets.items():
        nums = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                         for k, v in t.items() if k != "met")
        lines.append(f"| {name} | {'MET' if t['met'] else 'MISSED'} | {nums} |")
    return "\n".join(lines)


def doubleml_lines(path: str) -> str:
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "latent_ate_vs_doubleml", os.path.join(os.path.dirname(__file__),
                                               "latent_ate_vs_doubleml.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    data = wd.read_json(path)
    status = "MET" if data["worst"] <= data["tol"] else "MISSED"
    return (f"**Agreement with DoubleML** (same folds, same linear learners, float64): "
            f"largest relative difference {data['worst']:.1e} (target {data['tol']:g}: "
            f"{status})\n\n{module.table(data['rows'])}")


def load(workdirs: list[str]) -> tuple[dict, list[dict]]:
    """Merge the results of several runs (their settings must not overlap)."""
    merged, configs = None, []
    for w in workdirs:
        path = os.path.join(w, wd.RESULTS)
        if not os.path.exists(path):
            raise SystemExit(f"no {path}; run experiments/latent_ate/main.py first")
        res = wd.read_json(path)
        configs.append(wd.read_json(os.path.join(w, wd.CONFIG)))
        if merged is None:
            merged = dict(res, wall_s=[res["wall_s"]])
            continue
        overlap = set(merged["settings"]) & set(res["settings"])
        if overlap:
            raise SystemExit(f"settings {sorted(overlap)} appear in more than one workdir")
        merged["settings"].update(res["settings"])
        merged["targets"].update(res["targets"])
        merged["wall_s"].append(res["wall_s"])
    return merged, configs


def main(_):
    results, configs = load(_WORKDIR.value.split(","))
    walls = " + ".join(f"{w:.0f}" for w in results["wall_s"])
    tables = report.tables(results, configs[0]["estimators"], _FEATURES.value)
    text = (f"{tables}\n\n**Targets**\n\n{target_lines(results['targets'])}\n\n"
            f"Config `{configs[0]['tag']}`; measured on {results['machine']}, wall time "
            f"{walls} s ({len(configs)} run(s); pre-training "
            f"{results['features']['pretrain_seconds']:.0f} s in the first, 0 when its "
            "checkpoints and feature cache were reused; s = seconds per estimator for all "
            "replications).")
    if _DOUBLEML.value:
        text += "\n\n" + doubleml_lines(_DOUBLEML.value)
    if _README.value:
        report.splice(_README.value, _TAG.value, text)
    print(text)


if __name__ == "__main__":
    app.run(main)
