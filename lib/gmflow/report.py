"""Targets, markdown tables and the README block (`render`) from a GMFlow run's results.json.

Targets:
  toy:    on the checkerboard, GMFlow K = 64 at 4 steps reaches SWD ≤ flow matching at 32
          steps, and beats flow matching at every NFE ≤ 8 (best solver of each family at each
          NFE; per-solver numbers are in the table).
  digits: at each NFE, some probabilistic-guidance setting reaches CFG's best precision with
          a Fréchet distance no worse than CFG's at that setting and a lower saturation
          (judged on the means when several seeds were run; the count of seeds on which it
          holds by itself is reported beside it). The same test is applied to Fashion-MNIST.
"""
from __future__ import annotations

import numpy as np

from lib.common.report import machine_text, target, verdict

_SWEEP_METRICS = ("fd", "precision", "recall", "saturation", "out_of_range", "accuracy")


def mean_over_seeds(per_seed_nfe: list[dict]) -> dict:
    """Average sweeps of several seeds: [{nfe: {method: {"solver", "sweep": [row]}}}] (same
    NFEs, methods and scales in each) -> the same layout with each metric the mean over seeds
    and `<metric>_se` its standard error (sample std / √n), plus `n_seeds`."""
    n = len(per_seed_nfe)
    if n < 2:
        raise ValueError(f"mean_over_seeds needs at least two seeds, got {n}")
    first = per_seed_nfe[0]
    out = {}
    for nfe, per in first.items():
        out[nfe] = {}
        for method, m in per.items():
            rows = []
            for i, row in enumerate(m["sweep"]):
                runs = [p[nfe][method]["sweep"][i] for p in per_seed_nfe]
                if any(r["scale"] != row["scale"] for r in runs):
                    raise ValueError(f"seeds disagree on the scales of {method} at NFE {nfe}")
                agg = {"scale": row["scale"], "n_seeds": n}
                for key in _SWEEP_METRICS:
                    v = np.array([r[key] for r in runs], np.float64)
                    agg[key] = float(v.mean())
                    agg[f"{key}_se"] = float(v.std(ddof=1) / np.sqrt(n))
                rows.append(agg)
            out[nfe][method] = {"solver": m["solver"], "sweep": rows}
    return out



def _best(model: dict, nfe: int) -> tuple[float | None, str | None]:
    best = (None, None)
    for solver, r in model["solvers"].items():
        v = r["nfe"].get(str(nfe))
        if v is not None and (best[0] is None or v["swd"] < best[0]):
            best = (v["swd"], solver)
    return best


def toy_targets(toy: dict) -> dict | None:
    cb = toy.get("checkerboard")
    if cb is None or "fm" not in cb["models"] or "gm64" not in cb["models"]:
        return None
    gm, fm = cb["models"]["gm64"], cb["models"]["fm"]
    gm4, gm4_solver = _best(gm, 4)
    fm32, fm32_solver = _best(fm, 32)
    per_nfe = {}
    for n in (1, 2, 4, 8):
        g, gs = _best(gm, n)
        f, fs = _best(fm, n)
        if g is not None and f is not None:
            per_nfe[str(n)] = target(g < f, gm64=g, gm64_solver=gs, fm=f, fm_solver=fs)
    return {"gm64_nfe4_vs_fm_nfe32": None if gm4 is None or fm32 is None else target(
                gm4 <= fm32, gm64_nfe4=gm4, gm64_solver=gm4_solver, fm_nfe32=fm32,
                fm_solver=fm32_solver),
            "beats_fm_every_nfe_le_8": target(
                bool(per_nfe) and all(v["met"] for v in per_nfe.values()), per_nfe=per_nfe)}


def _pg_vs_cfg(per: dict) -> dict:
    cfg = max(per["cfg"]["sweep"], key=lambda r: r["precision"])
    ok = [r for r in per["pg"]["sweep"] if r["precision"] >= cfg["precision"]
          and r["fd"] <= cfg["fd"] and r["saturation"] < cfg["saturation"]]
    best_pg = max(per["pg"]["sweep"], key=lambda r: r["precision"])
    return target(ok, cfg_best_precision=cfg, pg_best_precision=best_pg,
                  pg_settings_meeting=[r["scale"] for r in ok])


def digits_targets(digits: dict) -> dict:
    """Per NFE: the target on `nfe` (the means when several seeds ran), and with several
    seeds also on each seed alone (`seeds_met` of `n_seeds`)."""
    out = {}
    for nfe, per in sorted(digits["nfe"].items(), key=lambda kv: int(kv[0])):
        if "pg" not in per or "cfg" not in per:
            continue
        out[nfe] = {**_pg_vs_cfg(per), "dataset": digits.get("dataset", "digits")}
        if "per_seed" in digits:
            out[nfe]["n_seeds"] = len(digits["per_seed"])
            out[nfe]["seeds_met"] = sum(_pg_vs_cfg(p["nfe"][nfe])["met"]
                                        for p in digits["per_seed"])
    return out


def targets(results: dict) -> dict:
    out = {}
    if "toy" in results:
        out["toy"] = toy_targets(results["toy"])
    if "digits" in results:
        out["digits"] = digits_targets(results["digits"])
    return out


def _f(x, d=3):
    return "—" if x is None else f"{x:.{d}f}"


def _time(train: dict) -> str:
    if train["resumed_from"]:
        return f"resumed at step {train['resumed_from']}, {train['train_s']:.0f} s in this run"
    return f"{train['train_s']:.0f} s"


def _ordered(models: dict) -> list:
    """Flow matching first, then GMFlow by K (results.json stores keys sorted as text)."""
    return sorted(models.items(), key=lambda kv: (kv[1]["loss"] != "l2", kv[1]["components"]))


def toy_table(toy: dict) -> str:
    parts = []
    for dataset, res in toy.items():
        nfes = sorted({int(n) for m in res["models"].values() for s in m["solvers"].values()
                       for n in s["nfe"]})
        ref = res["reference"]
        head = (f"**{dataset}**: sliced W₂ to fresh data samples (lower is better; two "
                f"independent data sets give {ref['swd']:.3f})"
                + (f"; in-square fraction in brackets (data: {ref['in_square']:.3f})"
                   if dataset == "checkerboard" else "") + "\n\n"
                "| model | solver | " + " | ".join(f"NFE {n}" for n in nfes) + " |\n"
                "|---|---|" + "---|" * len(nfes))
        rows = []
        for name, m in _ordered(res["models"]):
            for solver, s in m["solvers"].items():
                cells = []
                for n in nfes:
                    v = s["nfe"].get(str(n))
                    if v is None:
                        cells.append("n/a")
                    elif dataset == "checkerboard":
                        cells.append(f"{v['swd']:.3f} ({v['in_square']:.2f})")
                    else:
                        cells.append(f"{v['swd']:.3f}")
                label = "flow matching (L2)" if name == "fm" else f"GMFlow K={m['components']}"
                rows.append(f"| {label} | {solver} | " + " | ".join(cells) + " |")
        mmd = "MMD² (×10³) at NFE " + ", ".join(str(n) for n in nfes) + ": " + "; ".join(
            f"{name}/{solver}: " + ", ".join(
                "n/a" if s["nfe"].get(str(n)) is None else f"{1e3 * s['nfe'][str(n)]['mmd']:.1f}"
                for n in nfes)
            for name, m in _ordered(res["models"]) for solver, s in m["solvers"].items())
        train = "; ".join(f"{name}: loss {_f(m['train']['first_loss'])} → "
                          f"{_f(m['train']['last_loss'])} in {m['train']['steps']} steps "
                          f"({_time(m['train'])})" for name, m in _ordered(res["models"]))
        parts.append("\n".join([head, *rows]) + f"\n\n{mmd} (data vs data: "
                     f"{1e3 * ref['mmd']:.1f}).\n\nTraining: {train}.")
    return "\n\n".join(parts)


def _pm(r: dict, key: str, d: int) -> str:
    """`mean ± SE` when the row is a mean over seeds, else the value."""
    se = r.get(f"{key}_se")
    return f"{r[key]:.{d}f}" if se is None else f"{r[key]:.{d}f} ± {se:.{d}f}"


def digits_table(d: dict) -> str:
    seeds = d.get("seeds")
    intro = []
    if "dataset" in d:
        h, w, _ = d["image_shape"]
        intro.append(f"**{d['dataset']}** ({h}×{w}, {d['network']} denoisers"
                     + (f"; mean ± standard error over {len(seeds)} seeds {seeds} (seed offsets "
                        "of training and sampling)" if seeds else "; one seed")
                     + f"; real reference set: {d['real']['count']} images)\n")
    head = ("| NFE | method (solver) | scale | FD ↓ | precision ↑ | recall ↑ | saturation "
            f"(data {d['real']['saturation']:.3f}) | out of [0,1] | class acc. |\n"
            "|---|---|---|---|---|---|---|---|---|")
    rows = []
    for nfe, per in sorted(d["nfe"].items(), key=lambda kv: int(kv[0])):
        for method, m in sorted(per.items(), key=lambda kv: ("pg", "cfg", "cfg_gm").index(kv[0])):
            label = {"pg": "prob. guidance, GMFlow", "cfg": "CFG, flow matching",
                     "cfg_gm": "CFG, GMFlow means"}[method]
            for r in m["sweep"]:
                rows.append(f"| {nfe} | {label} ({m['solver']}) | {r['scale']:g} "
                            f"| {_pm(r, 'fd', 2)} | {_pm(r, 'precision', 3)} "
                            f"| {_pm(r, 'recall', 3)} | {_pm(r, 'saturation', 3)} "
                            f"| {r['out_of_range']:.3f} | {r['accuracy']:.3f} |")
    train = "; ".join(f"{n}: loss {_f(t['first_loss'])} → {_f(t['last_loss'])} in {t['steps']} "
                      f"steps ({_time(t)})" for n, t in d["train"].items())
    return ("\n".join([*intro, head, *rows]) + f"\n\nMetric classifier test accuracy "
            f"{d['classifier_test_accuracy']:.3f}. Training{' (first seed)' if seeds else ''}: "
            f"{train}.")


def targets_table(t: dict) -> str:
    lines = ["| target | measured | status |", "|---|---|---|"]
    toy = t.get("toy")
    if toy:
        a = toy["gm64_nfe4_vs_fm_nfe32"]
        if a:
            lines.append(f"| checkerboard: GMFlow K=64 at NFE 4 ≤ flow matching at NFE 32 (SWD) "
                         f"| {a['gm64_nfe4']:.3f} ({a['gm64_solver']}) vs {a['fm_nfe32']:.3f} "
                         f"({a['fm_solver']}) | {verdict(a)} |")
        b = toy["beats_fm_every_nfe_le_8"]
        cells = ", ".join(f"NFE {n}: {v['gm64']:.3f} vs {v['fm']:.3f}"
                          for n, v in b["per_nfe"].items())
        lines.append(f"| checkerboard: GMFlow K=64 beats flow matching at every NFE ≤ 8 "
                     f"| {cells} | {verdict(b)} |")
    for nfe, v in sorted((t.get("digits") or {}).items(), key=lambda kv: int(kv[0])):
        c, p = v["cfg_best_precision"], v["pg_best_precision"]
        seeds = (f" Seeds meeting it alone: {v['seeds_met']} of {v['n_seeds']}."
                 if "n_seeds" in v else "")
        means = f" (means over {v['n_seeds']} seeds)" if "n_seeds" in v else ""
        lines.append(
            f"| {v.get('dataset', 'digits')} NFE {nfe}"
            f"{means}: prob. guidance reaches CFG's best precision, FD no worse, "
            f"lower saturation | CFG best prec. {c['precision']:.3f} (w={c['scale']:g}, FD "
            f"{c['fd']:.2f}, sat. {c['saturation']:.3f}); PG best prec. {p['precision']:.3f} "
            f"(w̃={p['scale']:g}, FD {p['fd']:.2f}, sat. {p['saturation']:.3f}); PG settings "
            f"meeting all three: {v['pg_settings_meeting'] or 'none'}.{seeds} "
            f"| {verdict(v)} |")
    return "\n".join(lines)


def markdown(results: dict) -> str:
    out = []
    if results.get("targets"):
        out.append(targets_table(results["targets"]))
    if "toy" in results:
        out.append(toy_table(results["toy"]))
    if "digits" in results:
        out.append(digits_table(results["digits"]))
    return "\n\n".join(out)


def render(results: dict, config: dict) -> str:
    """The README block: `markdown` plus the budget and machine."""
    return (f"{markdown(results)}\n\nConfig `{config['tag']}`: "
            f"{results['budget']['train_steps_per_model']} training steps per model; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s']:.0f} s.")
