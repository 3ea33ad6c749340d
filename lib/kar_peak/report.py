"""Targets, markdown tables and the README block (`render`) of a KAR/PEAK run's results.json
(used by train.py and tools/results.py --paper=kar_peak)."""
from __future__ import annotations

import numpy as np

from lib.common.report import cell, target, verdict
from lib.kar_peak.training import parse_method

TARGET = "peak+kar"


def baselines(methods) -> list[str]:
    """Plain INRs (no PEAK encoding, no KAR): the methods PEAK+KAR must beat."""
    return [m for m in methods if parse_method(m)[0] != "peak" and not parse_method(m)[1]]


def _cells(rows):
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        out.setdefault((r["image"], r["mask"]), {})[r["method"]] = r
    return out


def targets(results: dict, methods) -> dict:
    """The targets, each a target record {"value": ..., "met": bool} (absent parts are
    skipped)."""
    out = {}
    base = baselines(methods)
    if "images" in results and TARGET in methods and base:
        margins = {}
        for (image, mask), by in _cells(results["images"]["rows"]).items():
            best = max(base, key=lambda m: by[m]["psnr_missing"])
            margins[f"{image}/{mask}"] = dict(best=best, margin_db=by[TARGET]["psnr_missing"] - by[best]["psnr_missing"])
        vals = np.array([m["margin_db"] for m in margins.values()])
        out["psnr_beats_best_baseline_every_cell"] = target(
            np.all(vals > 0), value=f"{int(np.sum(vals > 0))}/{len(vals)}", margins=margins)
        out["mean_margin_at_least_1dB"] = target(vals.mean() >= 1.0, value=float(vals.mean()))
        rows = [r for r in results["images"]["rows"] if r["method"] == TARGET]
        rise = float(np.mean([r["align_final"] - r["align_init"] for r in rows]))
        out["image_alignment_rises"] = target(rise > 0, value=rise)
    reg = results.get("regression")
    if reg and TARGET in reg["methods"]:
        # KAR's claim: the kernel of a KAR-trained INR is better aligned with K* than at its
        # initialisation and than that of every INR trained without KAR
        t = reg["methods"][TARGET]
        plain = {m: v["align_final"] for m, v in reg["methods"].items() if not parse_method(m)[1]}
        met = t["align_final"] > t["align_init"] and all(t["align_final"] > a for a in plain.values())
        out["regression_alignment_rises"] = target(
            met, value=f"{t['align_init']:.3f} -> {t['align_final']:.3f} (without KAR: "
                       f"{', '.join(f'{m} {a:.3f}' for m, a in plain.items())})")
    return out


def image_table(results: dict) -> str:
    rows = results["images"]["rows"]
    cells = _cells(rows)
    keys = list(cells)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    head = "| method | " + " | ".join(f"{i} / {m}" for i, m in keys) + " | mean |"
    lines = [head, "|" + "---|" * (len(keys) + 2)]
    for m in methods:
        ps = [cells[k][m]["psnr_missing"] for k in keys]
        ss = [cells[k][m]["ssim_missing"] for k in keys]
        lines.append(f"| {m} | " + " | ".join(f"{cell(p, 2, 'f')} / {cell(s, 3, 'f')}" for p, s in zip(ps, ss))
                     + f" | {cell(float(np.mean(ps)), 2, 'f')} / {cell(float(np.mean(ss)), 3, 'f')} |")
    return "\n".join(lines)


def alignment_table(results: dict) -> str:
    rows = results["images"]["rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = ["| method | centred A(Θ, yyᵀ) init | after training | uncentred init | after | train MSE (observed) |",
             "|---|---|---|---|---|---|"]
    for m in methods:
        rs = [r for r in rows if r["method"] == m]
        mean = lambda k, rs=rs: float(np.mean([r[k] for r in rs]))
        lines.append(f"| {m} | {cell(mean('align_init'), 3, 'f')} | {cell(mean('align_final'), 3, 'f')} | "
                     f"{cell(mean('align_init_uncentred'), 3, 'f')} | {cell(mean('align_final_uncentred'), 3, 'f')} | "
                     f"{cell(mean('train_mse'), 2, 'e')} |")
    return "\n".join(lines)


def regression_table(results: dict) -> str:
    reg = results["regression"]
    lines = ["| method | test MSE | A(Θ, K*) init | A(Θ, K*) after training |", "|---|---|---|---|"]
    for m, v in reg["methods"].items():
        lines.append(f"| {m} | {cell(v['test_mse'], 3, 'e')} | {cell(v['align_init'], 3, 'f')} | "
                     f"{cell(v['align_final'], 3, 'f')} |")
    lines.append(f"| posterior mean (Bayes-optimal) | {cell(reg['bayes_mse'], 3, 'e')} | — | — |")
    lines.append(f"| ReLU MLP, infinite-width NTK (analytic) | — | {cell(reg['relu_infinite_alignment'], 3, 'f')} | — |")
    return "\n".join(lines) + f"\n\nSignal power E[f*²] on the grid: {cell(reg['signal_power'], 3, 'f')}."


def targets_table(results: dict) -> str:
    lines = ["| target | value | met |", "|---|---|---|"]
    for name, t in results.get("targets", {}).items():
        v = t["value"]
        lines.append(f"| {name} | {cell(v, 3, 'f') if isinstance(v, float) else v} | {verdict(t)} |")
    return "\n".join(lines)


def tables(results: dict) -> str:
    """All markdown tables of a run."""
    parts = []
    if "images" in results:
        parts += ["PSNR (dB) / SSIM on the missing pixels, image / mask:", "", image_table(results), "",
                  "NTK–target alignment on the evaluation pixels (mean over images and masks):", "",
                  alignment_table(results), ""]
    if "regression" in results:
        parts += ["1-D regression with the closed-form optimal kernel K* (mean over draws):", "",
                  regression_table(results), ""]
    parts += ["Targets:", "", targets_table(results)]
    return "\n".join(parts)


def render(results: dict, config: dict) -> str:
    """The README block: the targets recomputed from the measured rows, the tables, the run
    line (config tag, size, steps, machine, wall time)."""
    results["targets"] = targets(results, config["methods"])
    steps = [f"{config['train']['num_steps']} steps per image fit"] if "images" in results else []
    if "regression" in results:
        steps.append(f"{config['regression']['num_steps']} per 1-D fit")
    return (f"{tables(results)}\n\nConfig `{config['tag']}` ({config['data']['size']}², "
            f"{', '.join(steps)}); measured on {results['machine']} in {results['wall_s']:.0f} s.")
