"""Merge EARTH runs made one dataset per workdir (run side by side) into one results folder.

    python tools/earth_merge.py --out=workdirs/earth/official \
        workdirs/earth/official_us_regions workdirs/earth/official_japan workdirs/earth/official_australia
    python tools/results.py --paper=earth --workdir=workdirs/earth/official --readme=experiments/earth/README.md --tag=official

Each part is a workdir of experiments/earth/main.py with the same config except
`datasets`, `models` and `select` (e.g. one part per dataset, or EARTH with its own epoch
budget apart from the cheaper models; each model's budget is in its results' `selection`); the merged results.json holds every part's (dataset, model) results, the targets
recomputed from them (lib/earth/report.targets), `wall_s` the longest part's when they ran
at the same time (the default) or their sum with `--sequential` (one after another), and `complete` only when every part completed. config.json is the
first part's with `datasets` and `models` the unions. Parts whose configs differ in
anything else, or that share a (dataset, model), are refused.
"""
from __future__ import annotations

import argparse
import os
import sys

from lib.common import workdir as wd
from lib.earth import report


def merge(parts: list[str], sequential: bool = False) -> tuple[dict, dict]:
    """(results, config) of the parts' results.json / config.json, merged."""
    results, configs = [], []
    for p in parts:
        path = os.path.join(p, wd.RESULTS)
        if not os.path.exists(path):
            raise SystemExit(f"no {path}; run experiments/earth/main.py there first")
        results.append(wd.read_json(path))
        configs.append(wd.read_json(os.path.join(p, wd.CONFIG)))
    strip = lambda c: {k: v for k, v in c.items() if k not in ("datasets", "models", "select", "run")}  # noqa: E731
    for p, c in zip(parts[1:], configs[1:]):
        if strip(c) != strip(configs[0]):
            diff = sorted(k for k in set(strip(c)) | set(strip(configs[0]))
                          if strip(c).get(k) != strip(configs[0]).get(k))
            raise SystemExit(f"{p}: config differs from {parts[0]} in {diff}")
    out = dict(results[0])
    for key in ("datasets", "results", "train_eval_seconds"):
        out[key] = {}
    for p, r in zip(parts, results):
        for ds, models in r["results"].items():
            out["datasets"][ds] = r["datasets"][ds]
            for name, v in models.items():
                if name in out["results"].setdefault(ds, {}):
                    raise SystemExit(f"({ds}, {name}) appears in two parts ({p})")
                out["results"][ds][name] = v
                out["train_eval_seconds"].setdefault(ds, {})[name] = r["train_eval_seconds"][ds][name]
    out["targets"] = report.targets(out["results"], None)
    walls = [r["wall_s"] for r in results]
    out["wall_s"] = sum(walls) if sequential else max(walls)
    out["complete"] = all(r["complete"] for r in results)
    config = dict(configs[0])
    config["datasets"] = list(out["results"])
    config["models"] = list(dict.fromkeys(m for c in configs for m in c["models"]))
    return out, config


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--sequential", action="store_true",
                    help="the parts ran one after another: wall_s is their sum, not the longest")
    ap.add_argument("parts", nargs="+")
    a = ap.parse_args(argv)
    results, config = merge(a.parts, a.sequential)
    os.makedirs(a.out, exist_ok=True)
    wd.write_json_atomic(os.path.join(a.out, wd.RESULTS), results)
    wd.write_json_atomic(os.path.join(a.out, wd.CONFIG), config)
    print(f"merged {len(a.parts)} parts ({', '.join(config['datasets'])}) into {a.out}")


if __name__ == "__main__":
    sys.exit(main())
