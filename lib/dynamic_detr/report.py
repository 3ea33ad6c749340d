"""Targets, markdown tables, the results-tool `render` and the AP-vs-FLOPs plot of a
dynamic_detr run."""
from __future__ import annotations

import os

from lib.common import workdir as wd
from lib.common.report import cell, machine_text, target
from lib.toolbox import plotting

# rows of a design alternative of the full method (not an ablation: no target on them)
ALTERNATIVES = ("holistic_kept",)


def _find(rows, method, budget=None, ablation="none"):
    for r in rows:
        if (r["method"] == method and r["ablation"] == ablation
                and (budget is None or abs(r["budget"] - budget) < 1e-9)):
            return r
    return None


def targets(rows: list[dict], budgets: tuple[float, ...], ablations: tuple[str, ...] = ()) -> dict:
    """The three targets from the measured rows.

    1. At every budget of `budgets`, AP(dynamic) >= AP(topk); a budget where one of the two
       was not measured is listed in "unmeasured" and the target is not met.
    2. Some dynamic run reaches the dense AP (> 0) with >= 30 % fewer encoder FLOPs.
    3. Every ablation has a lower AP than the full method at its budget; the configured
       `ablations` without a row are listed in "unmeasured" and the target is not met.
    """
    dense = _find(rows, "dense")
    per_budget, unmeasured = [], []
    for b in budgets:
        d, t = _find(rows, "dynamic", b), _find(rows, "topk", b)
        if d and t:
            per_budget.append(target(d["AP"] >= t["AP"], budget=b, dynamic=d["AP"], topk=t["AP"]))
        else:
            unmeasured.append(b)
    t1 = target(bool(per_budget) and not unmeasured and all(p["met"] for p in per_budget),
                per_budget=per_budget, unmeasured=unmeasured)
    t2 = target(False, saving=None, dense_AP=dense["AP"] if dense else None)
    if dense:                                       # a dense AP of 0 is no level to reach
        ok = [r for r in rows if r["method"] == "dynamic" and r["ablation"] == "none"
              and r["AP"] >= dense["AP"] > 0]
        best_saving = max((1 - r["encoder_gflops"] / dense["encoder_gflops"] for r in ok), default=None)
        t2 = target(best_saving is not None and best_saving >= 0.3, saving=best_saving,
                    dense_AP=dense["AP"])
    abl = []
    for r in rows:
        if r["ablation"] not in ("none",) + ALTERNATIVES:
            full = _find(rows, "dynamic", r["budget"])
            if full:
                abl.append(target(r["AP"] < full["AP"], ablation=r["ablation"], AP=r["AP"],
                                  full_AP=full["AP"]))
    missing = [a for a in ablations if a not in {x["ablation"] for x in abl}]
    t3 = target(bool(abl) and not missing and all(a["met"] for a in abl), per_ablation=abl,
                unmeasured=missing)
    return {"dynamic_ge_topk": t1, "flops_saving_at_dense_ap": t2, "ablations_cost_ap": t3}


def variant_line(name: str, steps: int, row: dict) -> str:
    """The progress line of one fine-tuned variant: steps, AP, AP50, encoder cost."""
    return (f"{name}: {steps} steps, AP {row['AP']:.3f} AP50 {row['AP50']:.3f} "
            f"encoder {row['encoder_gflops'] * 1e3:.2f} MFLOPs {row['images_per_s']:.0f} img/s")


def tables(results: dict) -> str:
    head = ("| variant | mean keep | tokens per block | AP | AP50 | AP75 | AP_S | AP_M | AP_L | "
            "encoder MFLOPs | encoder img/s | fine-tune steps |\n|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in results["rows"]:
        lines.append(f"| {r['name']} | {r['mean_keep']:.2f} | {'/'.join(map(str, r['tokens_per_block']))} | "
                     + " | ".join(cell(r[k], 3, "f") for k in ("AP", "AP50", "AP75", "AP_S", "AP_M", "AP_L"))
                     + f" | {r['encoder_gflops'] * 1e3:.2f} | {r['images_per_s']:.0f} | "
                     + f"{r.get('finetune_steps', '–')} |")
    t = results["targets"]
    def word(target, parts=None):
        """MET; MISSED when a measured case fails; NOT ESTABLISHED when every measured case
        holds but some were not measured."""
        if target["met"]:
            return "**MET**"
        measured_ok = parts is not None and all(p["met"] for p in target[parts])
        return "**NOT ESTABLISHED**" if target.get("unmeasured") and measured_ok else "**MISSED**"
    t1 = t["dynamic_ge_topk"]
    per = ", ".join(f"ρ={p['budget']:g}: {p['dynamic']:.3f} vs {p['topk']:.3f}" for p in t1["per_budget"])
    t2 = t["flops_saving_at_dense_ap"]
    sav = "no dynamic run reached the dense AP" if t2["saving"] is None else f"best saving {100 * t2['saving']:.0f} %"
    t3 = t["ablations_cost_ap"]
    ab = ", ".join(f"{a['ablation']} {a['AP']:.3f}" for a in t3["per_ablation"])
    full = f" (full {t3['per_ablation'][0]['full_AP']:.3f})" if t3["per_ablation"] else ""
    if t1.get("unmeasured"):
        per += (("; " if per else "") + "not measured at "
                + ", ".join(f"ρ={b:g}" for b in t1["unmeasured"]))
    if t3.get("unmeasured"):
        full += ("; " if ab else "") + "not measured: " + ", ".join(t3["unmeasured"])
    lines += ["", f"- AP(dynamic) ≥ AP(top-k) at every budget: {word(t1, 'per_budget')} ({per})",
              f"- dense AP ({cell(t2['dense_AP'], 3, 'f')}) with ≥ 30 % fewer encoder FLOPs: "
              f"{word(t2)} ({sav})",
              (f"- every ablation costs AP: {word(t3, 'per_ablation')} ({ab}{full})"
               if t3["per_ablation"] or t3.get("unmeasured") else
               "- every ablation costs AP: not measured (this run has no ablation)"),
              *[f"- design comparison: {r['name']} (holistic aggregation into the kept tokens, "
                f"the earlier design) AP {r['AP']:.3f} against the full method's "
                f"{_find(results['rows'], 'dynamic', r['budget'])['AP']:.3f}"
                for r in results["rows"] if r["ablation"] in ALTERNATIVES
                and _find(results["rows"], "dynamic", r["budget"])],
              f"- pretrained dense checkpoint before fine-tuning: AP {results['pretrained_dense']['AP']:.3f}; "
              f"N = {results['tokens']} tokens"]
    pre = results.get("stages", {}).get("pretrain")
    if pre:
        if pre["resumed_from"] == pre["steps"]:
            lines.append(f"- dense pre-training: restored from its checkpoint at step {pre['steps']}")
        else:
            lines.append(f"- dense pre-training: {pre['steps']} of {pre['target_steps']} steps"
                         + (" (stopped by the time budget)" if pre["stopped_by_budget"] else "")
                         + f", {pre['steps_per_s']:.1f} steps/s")
    stopped = results.get("budget", {}).get("stopped_by_budget")
    if stopped:
        lines.append(f"- stopped by the wall-clock budget ({results['budget']['time_budget_s']:g} s): "
                     f"{', '.join(stopped)}")
    if not results.get("complete", True):
        lines.append(f"- **run incomplete**: not yet measured: {', '.join(results['missing'])}")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> str:
    curves = {}
    for meth in ("topk", "focus", "dynamic"):
        pts = sorted((r["encoder_gflops"] * 1e3, r["AP"]) for r in rows
                     if r["method"] == meth and r["ablation"] == "none")
        if pts:
            curves[meth] = ([p[0] for p in pts], [p[1] for p in pts])
    points = {r["name"]: ([r["encoder_gflops"] * 1e3], [r["AP"]], [0.0]) for r in rows
              if r["method"] == "dense" or r["ablation"] != "none"}
    return plotting.curves_and_points(path, curves=curves, points=points, xlabel="encoder MFLOPs per image",
                                      ylabel="COCO AP", title="AP vs encoder FLOPs", logx=False)


def seed_table(runs: list[tuple[str, dict]]) -> str:
    """AP of every variant across repeated runs (label, results.json) of one config: one
    column per run, mean and sample standard deviation, then how many runs satisfy each
    target (dynamic ≥ top-k per budget, each ablation below the full method) and the
    design comparison. Variants follow the first run's row order; a variant a run lacks
    is shown as –."""
    import numpy as np

    names = [r["name"] for r in runs[0][1]["rows"]]
    for _, res in runs[1:]:
        names += [r["name"] for r in res["rows"] if r["name"] not in names]
    ap = {n: [next((r["AP"] for r in res["rows"] if r["name"] == n), None) for _, res in runs]
          for n in names}
    lines = ["| variant | " + " | ".join(label for label, _ in runs) + " | mean | sd |",
             "|---|" + "---|" * (len(runs) + 2)]
    for n in names:
        got = [a for a in ap[n] if a is not None]
        sd = f"{np.std(got, ddof=1):.3f}" if len(got) > 1 else "–"
        lines.append(f"| {n} | " + " | ".join(cell(a, 3, "f") if a is not None else "–" for a in ap[n])
                     + f" | {np.mean(got):.3f} | {sd} |")

    def compare(a, b, better):
        pairs = [(x, y) for x, y in zip(ap.get(a, []), ap.get(b, [])) if x is not None and y is not None]
        k = sum(better(x, y) for x, y in pairs)
        diff = np.mean([x - y for x, y in pairs]) if pairs else float("nan")
        return k, len(pairs), diff

    first = {r["name"]: r for r in runs[0][1]["rows"]}
    lines.append("")
    for n, r in first.items():
        if r["method"] == "dynamic" and r["ablation"] == "none" and f"topk_{r['budget']:g}" in ap:
            k, m, d = compare(n, f"topk_{r['budget']:g}", lambda x, y: x >= y)
            lines.append(f"- dynamic ≥ top-k at ρ={r['budget']:g}: {k} of {m} runs "
                         f"(mean AP difference {d:+.3f})")
    for n in names:
        r = next((x for _, res in runs for x in res["rows"] if x["name"] == n), None)
        if r is None or r["ablation"] == "none":
            continue
        full = f"dynamic_{r['budget']:g}"
        if r["ablation"] in ALTERNATIVES:
            k, m, d = compare(full, n, lambda x, y: x >= y)
            lines.append(f"- design comparison, full method ≥ {n}: {k} of {m} runs "
                         f"(mean AP difference {d:+.3f})")
        else:
            k, m, d = compare(n, full, lambda x, y: x < y)
            lines.append(f"- {r['ablation']} costs AP: {k} of {m} runs "
                         f"(mean AP difference ablation − full {d:+.3f})")
    return "\n".join(lines)


def render(results: dict, config: dict, seed_runs: list[tuple[str, dict]] = ()) -> str:
    """The README block of a run: tables, targets and the machine line; with `seed_runs`
    (label, results.json of repeats of the same config) the AP across runs is appended."""
    # the targets are re-derived from the rows with the run's configured budgets and
    # ablations, so that an incomplete run lists what was not measured
    sparse = config["sparse"]
    results = {**results, "targets": targets(results["rows"], tuple(sparse["budgets"]),
                                             tuple(sparse["ablations"]))}
    text = (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s'] / 60:.1f} min.")
    if seed_runs:
        runs = [(f"seed {config['train']['seed']}", results), *seed_runs]
        text += "\n\nAP across runs:\n\n" + seed_table(runs)
    return text


RESULTS_FLAGS = {"seed_workdirs": ("list", None, "Workdirs of repeats of the same config (e.g. "
                                   "other train.seed): appends the AP of every variant across "
                                   "--workdir and these, and how many runs meet each target.")}


def results_block(results: dict, config: dict, workdir: str,
                  seed_workdirs: list[str] | None) -> str:
    """`render` with the runs in `seed_workdirs` as its `seed_runs`, labelled by seed."""
    seed_runs = [(f"seed {wd.read_json(os.path.join(w, wd.CONFIG))['train']['seed']}",
                  wd.read_json(os.path.join(w, wd.RESULTS))) for w in seed_workdirs or ()]
    return render(results, config, seed_runs)


def summary(config, rows: list[dict], names: list[str], pretrained: dict, tokens: int,
            stages: dict, machine: str, wall_s: float) -> dict:
    """results.json of a run that has measured `rows` of the variants `names` (run order)."""
    from lib.common import config as config_lib
    return {"rows": rows, "pretrained_dense": pretrained, "tokens": tokens,
            "complete": len(rows) == len(names), "missing": names[len(rows):],
            "targets": targets(rows, tuple(config.sparse.budgets), tuple(config.sparse.ablations)),
            "stages": stages,
            "budget": {**config_lib.to_json_dict(config)["run"],
                       "stopped_by_budget": sorted(k for k, v in stages.items()
                                                   if v["stopped_by_budget"])},
            "machine": machine, "wall_s": wall_s}
