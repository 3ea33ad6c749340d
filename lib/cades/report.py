"""AUROC, per-family summaries, the targets, markdown tables, the results-tool
`render` and the plots of a CADES run."""
from __future__ import annotations

import copy
import os
from typing import Sequence

import numpy as np

from lib.cades import official
from lib.cades.scenarios import OFFICIAL_SPP_FAMILIES
from lib.toolbox import plotting
from lib.common.report import machine_text, read_results, target, verdict

METHODS = ("cades", "kl_arr", "kl_int", "ks_arrival", "ks_interevent", "sss", "chi2", "q_plus",
           "q_minus")
SINGLE = METHODS[1:]
# the official code's baseline statistics (its experiments/spp.py plots these and CADES)
BASELINES = ("ks_arrival", "ks_interevent", "sss", "chi2", "q_plus", "q_minus")
LABELS = {"cades": "CADES", "kl_arr": "CADES-arr", "kl_int": "CADES-int",
          "ks_arrival": "KS arr", "ks_interevent": "KS int", "sss": "3S", "chi2": "χ²",
          "q_plus": "Q+", "q_minus": "Q−", "cades_conditional": "CADES (cond. ε)"}


def auroc(neg: np.ndarray, pos: np.ndarray) -> float:
    """P(pos > neg) + ½ P(pos = neg) (Mann–Whitney; ties count half): the area under the ROC
    curve of a score that should be larger for `pos` (what `sklearn.metrics.roc_auc_score`
    gives), from the ranks of the pooled scores, tied scores sharing their mean rank.

    neg: (n,), pos: (p,) scores, n, p ≥ 1.
    """
    neg, pos = np.asarray(neg, np.float64).ravel(), np.asarray(pos, np.float64).ravel()
    if not (neg.size and pos.size):
        raise ValueError(f"AUROC needs both classes; got {neg.size} negatives, {pos.size} positives")
    _, where, counts = np.unique(np.concatenate([neg, pos]), return_inverse=True,
                                 return_counts=True)
    mean_rank = np.cumsum(counts) - (counts - 1) / 2.0          # 1-based, per distinct value
    pos_ranks = mean_rank[where[neg.size:]].sum()
    return float((pos_ranks - pos.size * (pos.size + 1) / 2.0) / (pos.size * neg.size))


COMPARISONS = {"all": SINGLE, "cades_single": ("kl_arr", "kl_int"), "baselines": BASELINES}


def present(methods, have) -> tuple:
    """The methods of `methods` that a run measured (runs before χ² and Q± lack them)."""
    return tuple(m for m in methods if m in have)


def comparisons(have) -> dict:
    """{name: pool} of the comparisons a run supports: `all` (every single statistic it
    measured), `cades_single`, and `baselines` (the official code's six) when all six are
    there."""
    out = {"all": present(SINGLE, have), "cades_single": COMPARISONS["cades_single"]}
    if all(m in have for m in BASELINES):
        out["baselines"] = BASELINES
    return out


def family_summary(res: dict, etas: np.ndarray) -> dict:
    """Family-level AUROC = mean over η > 0; CADES against the best single-statistic method.

    res: {method: (seeds, etas)}. Comparisons (`comparisons`): against the best of all single
    statistics measured (KS arrival, KS inter-event, 3S, [χ², Q+, Q−,] CADES-arr,
    CADES-int), against the best CADES score used alone, and against the best of the
    official code's baselines. The difference CADES − best is taken per seed; `met` when
    its mean >= −2 SE over seeds ("at least the best baseline within noise").
    """
    pos = np.asarray(etas) > 0
    per_seed = {m: np.asarray(v)[:, pos].mean(1) for m, v in res.items()}
    mean = {m: float(v.mean()) for m, v in per_seed.items()}
    out = {"mean": mean}
    for name, pool in comparisons(res).items():
        best = max(pool, key=lambda m: mean[m])
        diff = per_seed["cades"] - per_seed[best]
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        out[name] = target(diff.mean() >= -2 * se, best=best, diff=float(diff.mean()), diff_se=se)
    return out


def resummarise(results: dict) -> dict:
    """Recompute every family summary and the targets from the raw AUROC arrays."""
    for r in _families(results).values():
        r["summary"] = family_summary({m: np.asarray(v) for m, v in r["auroc"].items()},
                                      np.asarray(r["etas"]))
    results["targets"] = targets(results)
    return results


def _families(results: dict) -> dict:
    out = {}
    for fam, r in results["parts"].get("spp", {}).get("families", {}).items():
        out[fam] = r
    for name, r in results["parts"].get("multivariate", {}).get("scenarios", {}).items():
        out[name] = r
    return out


def targets(results: dict) -> dict:
    """The two targets, evaluated on what this run measured."""
    t = {}
    fpr = results["parts"].get("fpr", {}).get("settings", {})
    if fpr:
        worst = []
        for name, r in fpr.items():
            for m in ("cades", "cades_conditional"):
                d = r["methods"][m]
                for a, f, se in zip(r["alphas"], d["fpr"], d["se"]):
                    worst.append({"setting": name, "method": m, "alpha": a, "fpr": f, "se": se,
                                  "excess_in_se": (f - a) / se if se > 0 else (0.0 if f <= a else np.inf)})
        t["fpr_within_alpha_plus_3se"] = target(
            all(w["fpr"] <= w["alpha"] + 3 * w["se"] for w in worst),
            worst=max(worst, key=lambda w: w["excess_in_se"]),
            min_repetitions=min(r["repetitions"] for r in fpr.values()))
    fams = _families(results)
    if fams:
        have = set.intersection(*(set(v["auroc"]) for v in fams.values()))
        for name in comparisons(have):
            diffs = {k: v["summary"][name]["diff"] for k, v in fams.items()}
            avg = float(np.mean(list(diffs.values())))
            missed = sorted(k for k, v in fams.items() if not v["summary"][name]["met"])
            t[f"auroc_vs_best_{name}"] = {
                "per_family_met": not missed, "missed": missed,
                "missed_by": ([min(-diffs[k] for k in missed), max(-diffs[k] for k in missed)]
                              if missed else None),
                "families": len(fams), "average_above": avg > 0, "mean_diff": avg}
        means = {m: float(np.mean([v["summary"]["mean"][m] for v in fams.values()]))
                 for m in present(METHODS, have)}
        best = max(present(SINGLE, have), key=lambda m: means[m])
        t["auroc_mean_over_families"] = target(means["cades"] > means[best], means=means,
                                               best_single=best)
        restated = official.targets(fams)
        if restated is not None:
            t["official_restated"] = restated
    return t


def _missed_text(x: dict) -> str:
    """" (missed in k of n families, by a–b: ...)" of a per-family comparison; "" if none."""
    if not x["missed"]:
        return ""
    lo, hi = x["missed_by"]
    return (f" (missed in {len(x['missed'])} of {x['families']} families, by "
            f"{lo:.3f}–{hi:.3f}: {', '.join(x['missed'])})")


def _f(x, nd=3):
    return f"{x:.{nd}f}"


def tables(results: dict) -> str:
    parts = []
    fams = _families(results)
    if fams:
        have = set.intersection(*(set(v["auroc"]) for v in fams.values()))
        ms = present(METHODS, have)
        head = ("| scenario | " + " | ".join(LABELS[m] for m in ms) +
                " | best single (all) | CADES − best (± SE) | best CADES score alone | "
                "CADES − it (± SE) |")
        rows = [head, "|" + "---|" * (len(ms) + 5)]
        for name, r in fams.items():
            s = r["summary"]
            cells = [("**" + _f(s["mean"][m]) + "**") if m == "cades" else _f(s["mean"][m])
                     for m in ms]
            extra = []
            for comp in ("all", "cades_single"):
                c = s[comp]
                extra += [LABELS[c["best"]], f"{c['diff']:+.3f} ± {c['diff_se']:.3f}"
                          + ("" if c["met"] else " ✗")]
            rows.append(f"| {name} | " + " | ".join(cells + extra) + " |")
        parts.append("AUROC (mean over η > 0 and seeds; AUROC of −p with two-sided conformal "
                     "p-values; ✗: CADES more than 2 SE below)\n\n" + "\n".join(rows))
        if "official_restated" in results.get("targets", {}):
            parts.append(official.table(results["targets"]["official_restated"], LABELS))
    fpr = results["parts"].get("fpr", {}).get("settings", {})
    if fpr:
        ms = present(("cades", "cades_conditional") + SINGLE,
                     set.intersection(*(set(r["methods"]) for r in fpr.values())))
        rows = ["| setting/model | α | " + " | ".join(LABELS[m] for m in ms) + " | ε (cond.) |",
                "|" + "---|" * (len(ms) + 3)]
        for name, r in fpr.items():
            for i, a in enumerate(r["alphas"]):
                cells = []
                for m in ms:
                    d = r["methods"][m]
                    mark = "" if d["within_3se"][i] else " ✗"
                    cells.append(f"{d['fpr'][i]:.4f} ± {d['se'][i]:.4f}{mark}")
                rows.append(f"| {name} | {a} | " + " | ".join(cells) +
                            f" | {r['epsilon_conditional'][i]:.3f} |")
        reps = min(r["repetitions"] for r in fpr.values())
        parts.append(f"Empirical FPR ± SE over {reps} calibration/test splits per row "
                     "(✗: above α + 3 SE)\n\n" + "\n".join(rows))
    t = results.get("targets", {})
    lines = []
    if "fpr_within_alpha_plus_3se" in t:
        x = t["fpr_within_alpha_plus_3se"]
        w = x["worst"]
        lines.append(f"- FPR <= α + 3 SE everywhere: **{verdict(x)}** (worst: "
                     f"{w['setting']} {LABELS[w['method']]} α = {w['alpha']}: {w['fpr']:.4f}, "
                     f"{w['excess_in_se']:+.2f} SE from α)")
    have = set.intersection(*(set(v["auroc"]) for v in fams.values())) if fams else set()
    listed = ", ".join(LABELS[m] for m in present(BASELINES, have) + ("kl_arr", "kl_int"))
    for name, words in (("all", f"best single statistic ({listed})"),
                        ("cades_single", "best CADES score alone"),
                        ("baselines", "best of the official code's baselines (KS arr, KS int, "
                                      "3S, χ², Q+, Q−)")):
        x = t.get(f"auroc_vs_best_{name}")
        if x is None:
            continue
        lines.append(f"- CADES >= {words} in every family (within 2 SE): "
                     f"**{verdict(x['per_family_met'])}**" + _missed_text(x))
        lines.append(f"- CADES above the per-family {words} on average: "
                     f"**{verdict(x['average_above'])}** (mean difference "
                     f"{x['mean_diff']:+.4f})")
    if "official_restated" in t:
        x = t["official_restated"]
        lines.append(f"- Re-stated per-family target (CADES against the official baselines as "
                     f"in the official code's own plots): **{verdict(x)}**"
                     + (f" (missed: {', '.join(x['missed'])})" if x["missed"] else ""))
    if "auroc_mean_over_families" in t:
        x = t["auroc_mean_over_families"]
        lines.append(f"- CADES's AUROC averaged over all families above every single method's "
                     f"average: **{verdict(x)}** (CADES "
                     f"{x['means']['cades']:.4f}; best single method on average: "
                     f"{LABELS[x['best_single']]} {x['means'][x['best_single']]:.4f})")
    if lines:
        parts.append("Targets\n\n" + "\n".join(lines))
    return "\n\n".join(parts)


def merge(results: dict, more: Sequence[dict], order: Sequence[str] = ()) -> dict:
    """`results` with the SPP families of the runs `more` added (e.g. families run in
    parallel processes), families listed in `order` first and in that order; wall times
    add up (process time, not elapsed). A family in two runs is an error."""
    out = copy.deepcopy(results)
    spp = out["parts"].setdefault("spp", {"families": {}, "wall_s": 0.0})
    for r in more:
        part = r["parts"].get("spp", {"families": {}, "wall_s": 0.0})
        twice = sorted(set(part["families"]) & set(spp["families"]))
        if twice:
            raise ValueError(f"SPP families {twice} are in more than one of the merged runs")
        spp["families"].update(copy.deepcopy(part["families"]))
        spp["wall_s"] += part["wall_s"]
        out["wall_s"] += r["wall_s"]
    rank = {name: i for i, name in enumerate(order)}
    spp["families"] = dict(sorted(spp["families"].items(),
                                  key=lambda kv: rank.get(kv[0], len(rank))))
    return out


def render(results: dict, config: dict) -> str:
    """The README block of a run: summaries and targets recomputed from the raw AUROC and
    FPR numbers (`resummarise`), the tables, and the machine and wall-time line."""
    results = resummarise(results)
    walls = ", ".join(f"{k} {v['wall_s']:.0f} s" for k, v in results["parts"].items())
    return (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s']:.0f} s ({walls}; "
            f"model fitting {results.get('models_wall_s', 0):.0f} s).")


RESULTS_FLAGS = {"more_workdirs": ("string", "", "Further run directories, comma-separated, "
                                   "whose SPP families are merged with --workdir's (no overlap).")}


def results_block(results: dict, config: dict, workdir: str, more_workdirs: str) -> str:
    """`render` of the run with the SPP families of the runs in `more_workdirs`
    (comma-separated; e.g. families run in parallel processes) merged in (`merge`)."""
    more = [read_results(w, "cades") for w in more_workdirs.split(",") if w]
    if more:
        results = merge(results, more, OFFICIAL_SPP_FAMILIES)
    return render(results, config)


def write_plots(plot_dir: str, results: dict) -> list[str]:
    paths = []
    for name, r in _families(results).items():
        etas = r["etas"]
        series = {LABELS[m]: (etas, np.asarray(r["auroc"][m]).mean(0))
                  for m in present(METHODS, r["auroc"])}
        paths.append(plotting.line_plot(
            os.path.join(plot_dir, f"auroc_{name.replace('/', '_')}.png"), series,
            xlabel="detectability η", ylabel="AUROC (mean over seeds)", hline=0.5,
            title=f"{name}: AUROC vs detectability"))
    for name, r in results["parts"].get("fpr", {}).get("settings", {}).items():
        a = r["alphas"]
        series = {"FPR = α": (a, a)}
        for m in ("cades", "cades_conditional", "ks_arrival", "sss"):
            series[LABELS[m]] = (a, r["methods"][m]["fpr"])
        paths.append(plotting.line_plot(
            os.path.join(plot_dir, f"fpr_{name.replace('/', '_')}.png"), series, xlabel="α",
            ylabel="empirical FPR", title=f"{name}: FPR vs α ({r['repetitions']} splits)"))
    return paths
