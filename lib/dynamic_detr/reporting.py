"""Targets, markdown tables and the AP-vs-FLOPs plot of a dynamic_detr run."""
from __future__ import annotations

from lib.common import plotting
from lib.common.report import cell


def _find(rows, method, budget=None, ablation="none"):
    for r in rows:
        if (r["method"] == method and r["ablation"] == ablation
                and (budget is None or abs(r["budget"] - budget) < 1e-9)):
            return r
    return None


def targets(rows: list[dict], budgets: tuple[float, ...]) -> dict:
    """The issue's three targets from the measured rows.

    1. At every budget where both ran, AP(dynamic) >= AP(topk).
    2. Some dynamic run reaches the dense AP with >= 30 % fewer encoder FLOPs.
    3. Every ablation of dynamic has a lower AP than the full method at its budget.
    """
    dense = _find(rows, "dense")
    per_budget = []
    for b in budgets:
        d, t = _find(rows, "dynamic", b), _find(rows, "topk", b)
        if d and t:
            per_budget.append({"budget": b, "dynamic": d["AP"], "topk": t["AP"], "met": d["AP"] >= t["AP"]})
    t1 = {"per_budget": per_budget, "met": bool(per_budget) and all(p["met"] for p in per_budget)}
    t2 = {"met": False, "saving": None, "dense_AP": dense["AP"] if dense else None}
    if dense:
        ok = [r for r in rows if r["method"] == "dynamic" and r["ablation"] == "none" and r["AP"] >= dense["AP"]]
        best_saving = max((1 - r["encoder_gflops"] / dense["encoder_gflops"] for r in ok), default=None)
        t2 = {"met": best_saving is not None and best_saving >= 0.3, "saving": best_saving,
              "dense_AP": dense["AP"]}
    abl = []
    for r in rows:
        if r["ablation"] != "none":
            full = _find(rows, "dynamic", r["budget"])
            if full:
                abl.append({"ablation": r["ablation"], "AP": r["AP"], "full_AP": full["AP"],
                            "met": r["AP"] < full["AP"]})
    t3 = {"per_ablation": abl, "met": bool(abl) and all(a["met"] for a in abl)}
    return {"dynamic_ge_topk": t1, "flops_saving_at_dense_ap": t2, "ablations_cost_ap": t3}


def tables(results: dict) -> str:
    head = ("| variant | mean keep | tokens per block | AP | AP50 | AP75 | AP_S | AP_M | AP_L | "
            "encoder MFLOPs | encoder img/s |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in results["rows"]:
        lines.append(f"| {r['name']} | {r['mean_keep']:.2f} | {'/'.join(map(str, r['tokens_per_block']))} | "
                     + " | ".join(cell(r[k], 3, "f") for k in ("AP", "AP50", "AP75", "AP_S", "AP_M", "AP_L"))
                     + f" | {r['encoder_gflops'] * 1e3:.2f} | {r['images_per_s']:.0f} |")
    t = results["targets"]
    word = lambda ok: "**MET**" if ok else "**MISSED**"
    t1 = t["dynamic_ge_topk"]
    per = ", ".join(f"ρ={p['budget']:g}: {p['dynamic']:.3f} vs {p['topk']:.3f}" for p in t1["per_budget"])
    t2 = t["flops_saving_at_dense_ap"]
    sav = "no dynamic run reached the dense AP" if t2["saving"] is None else f"best saving {100 * t2['saving']:.0f} %"
    t3 = t["ablations_cost_ap"]
    ab = ", ".join(f"{a['ablation']} {a['AP']:.3f}" for a in t3["per_ablation"])
    full = f" (full {t3['per_ablation'][0]['full_AP']:.3f})" if t3["per_ablation"] else ""
    lines += ["", f"- AP(dynamic) ≥ AP(top-k) at every budget: {word(t1['met'])} ({per})",
              f"- dense AP ({cell(t2['dense_AP'], 3, 'f')}) with ≥ 30 % fewer encoder FLOPs: "
              f"{word(t2['met'])} ({sav})",
              f"- every ablation costs AP: {word(t3['met'])} ({ab}{full})",
              f"- pretrained dense checkpoint before fine-tuning: AP {results['pretrained_dense']['AP']:.3f}; "
              f"N = {results['tokens']} tokens"]
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
