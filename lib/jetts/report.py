"""A JETTS run's targets, and the markdown tables and plots of its results.json
(experiments/jetts/train.py and `tools/results.py --paper=jetts`)."""
from __future__ import annotations

import os

import numpy as np

from lib.toolbox import plotting
from lib.common.report import cell, target, verdict


def rerank_vs_greedy(rows: dict) -> dict:
    """Every judge/method's reranking against greedy, with CIs: pairwise accuracy on pairs
    of different correctness (query bootstrap) and top-1 minus greedy (paired bootstrap).
    `chance`: "above" / "at" / "below" by whether the accuracy CI lies above 0.5, contains
    it, or lies below; `vs_greedy`: "better" / "tie" / "worse" by the difference's CI."""
    out = {}
    for k, v in rows.items():
        if k.startswith("oracle"):
            continue
        lo, hi = v.get("judge_accuracy_ci", [float("nan")] * 2)
        dlo, dhi = v["minus_greedy_ci"]
        out[k] = {"judge_accuracy": v["judge_accuracy"], "judge_accuracy_ci": [lo, hi],
                  "minus_greedy": v["top1"] - v["greedy"], "minus_greedy_ci": [dlo, dhi],
                  "chance": "above" if lo > 0.5 else "below" if hi < 0.5 else "at",
                  "vs_greedy": "better" if dlo > 0 else "worse" if dhi < 0 else "tie"}
    return out


def targets(results: dict) -> dict:
    """The three targets on arithmetic: PRM beats ORM and prompted judges in beam
    search; reranking with every better-than-chance judge beats greedy; both-order round
    robin cancels the simulated position bias. Empty without the arithmetic domain."""
    out = {}
    arith = results["domains"].get("arithmetic")
    if arith:
        beam = arith["beam"]
        if "PRM/score" in beam:
            prm = beam["PRM/score"]["top1"]
            rivals = {k: v["top1"] for k, v in beam.items()
                      if k.startswith(("ORM/", "judge-lm")) and "lookahead" not in k}
            cis = {k: beam[k].get("top1_ci") for k in ("PRM/score", *rivals)}
            extra = {}
            if all(c is not None and not np.any(np.isnan(c)) for c in cis.values()):
                lo = cis["PRM/score"][0]
                overlapping = [k for k in rivals if cis[k][1] >= lo]
                extra = {"prm_ci": list(cis["PRM/score"]),
                         "rivals_ci": {k: list(cis[k]) for k in rivals},
                         "overlapping": overlapping, "significant": not overlapping}
            out["prm_beats_orm_and_judges_in_beam"] = target(
                bool(rivals) and all(prm > v for v in rivals.values()), prm=prm, rivals=rivals,
                **extra)
        better = {k: {"top1": v["top1"], "greedy": v["greedy"], "judge_accuracy": v["judge_accuracy"]}
                  for k, v in arith["rerank"].items()
                  if not k.startswith("oracle") and v["judge_accuracy"] > 0.5}
        out["better_than_chance_rerank_beats_greedy"] = target(
            bool(better) and all(v["top1"] > v["greedy"] for v in better.values()),
            judges=better, analysis=rerank_vs_greedy(arith["rerank"]))
        ps = arith["position_study"]
        lo, hi = ps["both_orders"]["slope_ci"]
        lo1, hi1 = ps["one_order"]["slope_ci"]
        out["position_bias_cancelled"] = target(
            lo <= 0 <= hi and hi1 < 0, one_order_slope=ps["one_order"]["slope"],
            both_orders_slope=ps["both_orders"]["slope"])
    return out


def _prm_line(v: dict) -> str:
    """The beam-search target's line: top-1 (with 95 % CIs when the run has them) and
    whether the PRM's win is only on point estimates (some rival's CI reaches the PRM's)."""
    if "prm_ci" not in v:
        riv = ", ".join(f"{k} {x:.1f}" for k, x in v["rivals"].items())
        return (f"* PRM beats ORM and prompted judges in beam search: PRM {v['prm']:.1f} vs "
                f"{riv}: **{verdict(v)}**")
    riv = ", ".join(f"{k} {x:.1f} {_ci(v['rivals_ci'][k])}" for k, x in v["rivals"].items())
    line = (f"* PRM beats ORM and prompted judges in beam search: PRM {v['prm']:.1f} "
            f"{_ci(v['prm_ci'])} vs {riv}: **{verdict(v)}**")
    if not v["met"]:
        return line
    if v["overlapping"]:
        return (f"{line} on point estimates only: the 95 % intervals overlap "
                f"({', '.join(v['overlapping'])}), not significant")
    return f"{line}, every rival's 95 % interval below the PRM's"


def _ci(c) -> str:
    return "—" if c is None or any(np.isnan(c)) else f"[{c[0]:.2f}, {c[1]:.2f}]"


def _table(rows: dict, *, accuracy: bool = True) -> str:
    head = ("| judge / method | top-1 | 95 % CI | greedy | oracle | random | helpfulness H | H 95 % CI"
            + (" | judge pair acc." if accuracy else "") + " | calls | parse failures "
            "| cut at max_tokens |")
    sep = "|" + "---|" * (head.count("|") - 1)
    lines = [head, sep]
    for k, v in rows.items():
        acc = f" | {cell(v.get('judge_accuracy'), 3, 'f')}" if accuracy else ""
        lines.append(f"| {k} | {v['top1']:.1f} | {_ci(v['top1_ci'])} | {v['greedy']:.1f} | "
                     f"{v['oracle']:.1f} | {v['random']:.1f} | {cell(v['helpfulness'], 3, 'f')} | "
                     f"{_ci(v['helpfulness_ci'])}{acc} | {v['calls']} | {v['parse_failures']} | "
                     f"{v.get('truncated', '—')} |")
    return "\n".join(lines)


def _bias(rows: dict) -> str:
    lines = ["| judge / method | verdicts | first-position win rate | consistency (both orders) "
             "| longer wins |", "|---|---|---|---|---|"]
    for k, v in rows.items():
        b = v.get("bias")
        if b:
            lines.append(f"| {k} | {b['verdicts']} | {cell(b['first_win_rate'], 3, 'f')} | "
                         f"{cell(b['consistency'], 3, 'f')} | {cell(b['longer_win_rate'], 3, 'f')} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def results_markdown(results: dict) -> str:
    out = []
    tr = results.get("training", {})
    if tr:
        parts = [f"{k}: {v['steps']} steps" + (" (restored from an earlier invocation)"
                                               if v.get("resumed_from") == v["steps"]
                                               else f" in {v['wall_s']:.0f} s")
                 for k, v in tr.items()]
        out.append("Training: " + "; ".join(parts) + ".")
    for dom, d in results["domains"].items():
        out.append(f"\n**{dom}**")
        if "generator" in d:
            g = d["generator"]
            out.append(f"Generator: greedy accuracy {g['greedy_accuracy']:.2f}, sampled "
                       f"{cell(g['sample_accuracy'], 2, 'f')}, best of pool "
                       f"{g['pool_oracle']:.2f}; trees: {g['tree_leaves']} leaves, greedy leaf "
                       f"{g['tree_greedy']:.2f}, best leaf {g['tree_oracle']:.2f}.")
        if "pools" in d:
            p = d["pools"]
            out.append(f"Pools: {p['queries']} queries × {p['mean_pool']:.1f} candidates; "
                       f"greedy (position 0) {p['greedy']:.2f}, best {p['oracle']:.2f}, "
                       f"random {p['random']:.2f}.")
        if "trees" in d:
            t = d["trees"]
            out.append(f"Step trees (mutant chunks): {t['trees']} trees, mean depth "
                       f"{t['mean_depth']:.1f}, {t['mean_leaves']:.1f} leaves; greedy leaf "
                       f"{t['greedy_leaf']:.2f}, best leaf {t['best_leaf']:.2f}, mean leaf "
                       f"{t['mean_leaf']:.2f}.")
        out += ["", "Reranking (top-1 score × 100):", "", _table(d["rerank"])]
        if "beam" in d:
            out += ["", "Step-level beam search (final leaf correct × 100):", "",
                    _table(d["beam"], accuracy=False)]
        if "refine" in d:
            rf = d["refine"]
            out += ["", "Critique-based refinement (prompted judge, the generator refines; H "
                    "against the pool's best):", "",
                    "| mode | top-1 | greedy | H | mean revisions | stop reasons | refiner "
                    "parse failures | judge parse failures | judge replies cut |",
                    "|---|---|---|---|---|---|---|---|---|"]
            for mode in ("single", "pairwise"):
                v = rf[mode]
                out.append(f"| {mode} | {v['top1']:.1f} | {v['greedy']:.1f} | "
                           f"{cell(v['helpfulness'], 3, 'f')} | {v['mean_iterations']:.2f} | "
                           f"{v['stop_reasons']} | {v['refiner_parse_failures']} | "
                           f"{v['judge_parse_failures']} | {v.get('truncated', '—')} |")
            v = rf["rerank_same_queries"]
            out.append(f"| rerank (Likert), same queries | {v['top1']:.1f} | {v['greedy']:.1f} | "
                       f"{cell(v['helpfulness'], 3, 'f')} | — | — | — | {v['parse_failures']} | "
                       f"{v.get('truncated', '—')} |")
        if "judge_preflight" in d:
            v = d["judge_preflight"]
            out.append(f"\nJudge preflight (every prompt kind, before the protocols): "
                       f"{v['truncated']} of {v['calls']} replies cut at max_tokens, "
                       f"{v['parse_failures']} parse failures.")
        b = _bias(d["rerank"])
        if b:
            out += ["", "Pairwise bias report (reranking verdicts):", "", b]
        if "position_study" in d:
            ps = d["position_study"]
            out += ["", "Position study (simulated judge, pools shuffled; slope of the round-robin "
                    "total per position step):", "", "| orders | slope | 95 % CI | first-position win rate |",
                    "|---|---|---|---|"]
            for k in ("one_order", "both_orders"):
                v = ps[k]
                out.append(f"| {k.replace('_', ' ')} | {v['slope']:.3f} | {_ci(v['slope_ci'])} | "
                           f"{v['first_win_rate']:.3f} |")
    t = results.get("targets", {})
    if t:
        out += ["", "Targets:", ""]
        if "prm_beats_orm_and_judges_in_beam" in t:
            out.append(_prm_line(t["prm_beats_orm_and_judges_in_beam"]))
        if "better_than_chance_rerank_beats_greedy" in t:
            v = t["better_than_chance_rerank_beats_greedy"]
            worse = [k for k, x in v["judges"].items() if x["top1"] <= x["greedy"]]
            out.append(f"* reranking with every better-than-chance judge beats greedy "
                       f"({len(v['judges'])} judge/method pairs with pair accuracy > 0.5"
                       f"{'; not beating greedy: ' + ', '.join(worse) if worse else ''}): "
                       f"**{verdict(v)}**")
        if "position_bias_cancelled" in t:
            v = t["position_bias_cancelled"]
            out.append(f"* simulated position bias cancelled by both-order round robin (slope "
                       f"{v['one_order_slope']:.3f} with one order, {v['both_orders_slope']:.3f} "
                       f"with both): **{verdict(v)}**")
    an = t.get("better_than_chance_rerank_beats_greedy", {}).get("analysis")
    if an:
        out += ["", "Reranking against greedy with CIs (pair accuracy: query bootstrap; "
                "top-1 − greedy: paired bootstrap; chance / vs greedy read off the 95 % CIs):",
                "", "| judge / method | pair acc. | 95 % CI | chance | top-1 − greedy | "
                "95 % CI | vs greedy |", "|---|---|---|---|---|---|---|"]
        for k, v in an.items():
            out.append(f"| {k} | {cell(v['judge_accuracy'], 3, 'f')} | "
                       f"{_ci(v['judge_accuracy_ci'])} | {v['chance']} | "
                       f"{v['minus_greedy']:+.1f} | {_ci(v['minus_greedy_ci'])} | "
                       f"{v['vs_greedy']} |")
        above = [k for k, v in an.items() if v["chance"] == "above"]
        count = {c: sum(an[k]["vs_greedy"] == c for k in above) for c in ("better", "tie", "worse")}
        out += ["", f"Of the {len(above)} judge/method pairs whose pair-accuracy CI lies above "
                f"0.5, {count['better']} beat greedy (CI of the difference above 0), "
                f"{count['tie']} are indistinguishable from it and {count['worse']} are worse."]
    if results.get("warnings"):
        out += ["", "**Warnings** (judge replies cut at max_tokens; these rows' parse failures "
                "are truncations):", ""] + [f"* {w}" for w in results["warnings"]]
    out.append(f"\nMeasured on {results.get('machine', '?')} in {results.get('wall_s', 0):.0f} s.")
    return "\n".join(out)


def results_block(results: dict, config: dict, workdir: str) -> str:
    """`results_markdown` headed by the run's config tag and `workdir`."""
    del config
    return f"Run `{results['tag']}` (workdir `{workdir}`).\n\n" + results_markdown(results)


def publish_results(results: dict, config: dict, workdir: str) -> dict:
    """What `tools/results.py --publish` writes: the run's results, with the beam-search
    record's "significant" (no rival's 95 % interval reaches the PRM's lower bound) derived
    from its "overlapping" when the stored record lacks it; else `results` itself."""
    del config, workdir
    key = "prm_beats_orm_and_judges_in_beam"
    rec = (results.get("targets") or {}).get(key)
    if not isinstance(rec, dict) or "overlapping" not in rec or "significant" in rec:
        return results
    rest = {k: v for k, v in rec.items() if k != "met"}
    record = {**rest, "significant": not rec["overlapping"], "met": rec["met"]}
    return {**results, "targets": {**results["targets"], key: record}}


def plots(results: dict, directory: str) -> list[str]:
    """One bar chart of normalized helpfulness (with CIs) per domain and protocol."""
    import matplotlib.pyplot as plt
    paths = []
    for dom, d in results["domains"].items():
        for proto in ("rerank", "beam"):
            rows = d.get(proto)
            if not rows:
                continue
            keys = list(rows)
            h = np.array([rows[k]["helpfulness"] for k in keys], float)
            ci = np.array([rows[k]["helpfulness_ci"] for k in keys], float)
            err = np.abs(np.stack([h - ci[:, 0], ci[:, 1] - h]))
            fig, ax = plt.subplots(figsize=(7, 0.3 * len(keys) + 1.5))
            ax.barh(np.arange(len(keys)), np.nan_to_num(h), xerr=np.nan_to_num(err), capsize=2)
            ax.set_yticks(np.arange(len(keys)), keys, fontsize=7)
            ax.axvline(0, color="gray", lw=1)
            ax.axvline(1, color="gray", lw=1, ls="--")
            ax.set(xlabel="normalized helpfulness (0 = greedy, 1 = oracle)",
                   title=f"{dom}: {'reranking' if proto == 'rerank' else 'beam search'}")
            ax.invert_yaxis()
            paths.append(plotting.save(fig, os.path.join(directory, f"{dom}_{proto}.png")))
    return paths
