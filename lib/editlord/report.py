"""Targets, tables, the README block (`render`) and plots of an EditLord run
(results.json -> markdown / png)."""
from __future__ import annotations

import os

from lib.toolbox import plotting
from lib.common.report import cell, machine_text, target, verdict
from lib.toolbox.stats import sign_test_p  # noqa: F401  (re-exported: the report's own test name)

METRIC_NAMES = {"correct": "tests pass", "fixed": "anti-patterns removed",
                "success": "pass and all removed", "exact": "exact match", "parsed": "parses"}


def _pass_discordance(b: dict, s: dict) -> tuple[int, int, bool]:
    """(pairs only +spec+rules passes, pairs only base passes, exact?) on clean held-out
    inputs; without per-pair rows (older results) the count difference on the side that
    has it and 0 on the other, which gives the smallest possible p."""
    rb, rs = b.get("clean_rows"), s.get("clean_rows")
    if rb is not None and rs is not None:
        pb = {x["id"]: x["correct"] for x in rb}
        wins = sum(1 for x in rs if x["correct"] and not pb.get(x["id"], False))
        losses = sum(1 for x in rs if not x["correct"] and pb.get(x["id"], False))
        return wins, losses, True
    cb, cs = b["conditions"]["clean"], s["conditions"]["clean"]
    d = round(cs["n"] * cs["correct"]) - round(cb["n"] * cb["correct"])
    return max(d, 0), max(-d, 0), False


def targets(r: dict) -> dict:
    """The targets, each a target record {"detail": str, "met": bool}."""
    out = {}
    rec = r.get("rules", {}).get("recovery")
    if rec:
        met = rec["precision"] >= 0.8 and rec["recall"] >= 0.8
        out["rule_recovery"] = target(met, detail=f"precision {rec['precision']:.2f}, "
                                      f"recall {rec['recall']:.2f} (>= 0.8 each)")
    eds = r.get("editors", {})
    if "base" in eds and "spec_rules" in eds:
        b, s = eds["base"]["eval"], eds["spec_rules"]["eval"]
        bc, sc = b["conditions"]["clean"], s["conditions"]["clean"]
        # higher means, and a tests-pass advantage that one or two pairs cannot make: a
        # one-sided sign test on the pairs where exactly one editor passes, p <= 0.05
        w, l, exact = _pass_discordance(b, s)
        p = sign_test_p(w, l)
        met = sc["fixed"] > bc["fixed"] and sc["correct"] > bc["correct"] and p <= 0.05
        out["rules_beat_base"] = target(met, detail=(
            f"+spec+rules vs base, clean held-out: anti-patterns removed {sc['fixed']:.3f} vs "
            f"{bc['fixed']:.3f}, tests pass {sc['correct']:.3f} vs {bc['correct']:.3f}; pairs "
            f"only one passes: {w} vs {l}{'' if exact else ' (at best)'}, one-sided sign test "
            f"p {'=' if exact else '>='} {p:.3g} (needs <= 0.05)"))
        if "mean_drop" in b and "mean_drop" in s:
            db, ds = b["mean_drop"], s["mean_drop"]
            # "its advantage grows": a smaller drop, from an advantage on clean inputs (a
            # variant near the floor cannot drop much, which is no robustness)
            adv = sc["success"] > bc["success"]
            met = adv and ds["success"] < db["success"] and ds["fixed"] < db["fixed"]
            out["robustness"] = target(met, detail=(
                f"mean drop under perturbation, +spec+rules vs base: success {ds['success']:+.3f} "
                f"vs {db['success']:+.3f}, anti-patterns removed {ds['fixed']:+.3f} vs "
                f"{db['fixed']:+.3f} (smaller drop = advantage grows; needs an advantage on "
                f"clean inputs: success {sc['success']:.3f} vs {bc['success']:.3f})"))
    return out


def tables(r: dict) -> str:
    lines = []
    d = r["data"]
    lines += [f"Pairs: {d['pairs']} ({d['train_pairs']} train from {d['train_problems']} problems, "
              f"{d['test_pairs']} held-out from {d['test_problems']} problems).", ""]
    if "near_dup_threshold" in d:
        cl = d.get("near_dup_clusters", [])
        split_line = (f"Split by clusters of near-duplicate problems (shape-token similarity ≥ "
                      f"{d['near_dup_threshold']:g}; each cluster on one side): {len(cl)} "
                      f"clusters of 2+ problems ({'; '.join(' ~ '.join(c) for c in cl) or '—'}).")
        lines += [split_line, ""]
    co = r.get("corpus")
    if co:
        sk = co.get("skipped", {})
        rc = ", ".join(f"{k} {n}" for k, n in sorted(co.get("rule_counts", {}).items(),
                                                      key=lambda kv: -kv[1]))
        corpus_line = (f"Standard-library corpus (training only, no tests): {co['pairs']} pairs "
                       f"from {co['functions']} functions of ≤ max_chars characters "
                       f"({sk.get('near_dup_of_held_out', 0)} near-duplicates of held-out units "
                       f"left out); {co['samples']} editor samples, "
                       f"{cell(co['mean_rules_per_sample'])} manifested rules per sample; "
                       f"injected rules: {rc or '—'}.")
        lines += [corpus_line, ""]
    ru = r.get("rules", {})
    if "num_rules" in ru:
        lines.append(f"Rule learning: {ru.get('num_raw', '—')} extracted rules -> "
                     f"{ru['num_rules']} meta-rules in {ru.get('iterations', '—')} Algorithm-1 "
                     f"rounds (converged: {cell(ru.get('converged'))}; pruned "
                     f"{ru.get('pruned', '—')}, added {ru.get('added', '—')}, merged "
                     f"{ru.get('merged', '—')}).")
    rec = ru.get("recovery")
    if rec:
        lines += ["", "| rule recovery | value |", "|---|---|",
                  f"| precision (learned rules firing ≥ 80 % where one injected rule was) | {cell(rec['precision'])} |",
                  f"| recall (injected rules covered ≥ 50 %) | {cell(rec['recall'])} |",
                  f"| learned rules / eligible injected rules | {rec['num_learned']} / {rec['num_eligible']} |",
                  f"| missed | {', '.join(rec['missed']) or '—'} |"]
    eds = r.get("editors", {})
    if eds:
        lines += ["", "| editor variant | train loss | parses | tests pass | anti-patterns removed | "
                  "pass and all removed | exact | perturbed: pass and all removed | mean drop (success) | mean drop (removed) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for v, e in eds.items():
            c = e["eval"]["conditions"]["clean"]
            p = e["eval"].get("perturbed", {})
            md = e["eval"].get("mean_drop", {})
            lines.append(f"| {v} | {cell(e['train']['final_loss'])} | {cell(c['parsed'])} | "
                         f"{cell(c['correct'])} | {cell(c['fixed'])} | {cell(c['success'])} | "
                         f"{cell(c['exact'])} | {cell(p.get('success'))} | "
                         f"{cell(md.get('success'))} | {cell(md.get('fixed'))} |")
    fails = {v: e["eval"].get("failures", {}).get("clean") for v, e in eds.items()}
    if any(f is not None for f in fails.values()):
        fmt = r.get("editor_format", "code")
        lines += ["", (f"Editor target format: `{fmt}`. Clean held-out replies without a "
                       "candidate, by reason (counted as failures, never repaired):"), "",
                  "| editor variant | failures by reason |", "|---|---|"]
        for v, f in fails.items():
            lines.append(f"| {v} | {', '.join(f'{k} {n}' for k, n in sorted((f or {}).items())) or '—'} |")
    lines += _per_perturbation(r)
    if r.get("abstract_identifiers"):
        inv = ", ".join(f"{v} {e['eval'].get('invented', {}).get('clean', 0)}"
                        for v, e in eds.items())
        lines += ["", ("Identifier abstraction on (`editor.abstract_identifiers`): the editors "
                       "saw and wrote f0 / v0 placeholders, mapped back before scoring; "
                       f"placeholder names not in the input's map (kept as written), clean "
                       f"held-out: {inv or '—'}.")]
    succ = {v: e["eval"]["clean_successes"] for v, e in eds.items()
            if "clean_successes" in e["eval"]}
    if succ:
        lines += ["", "| editor variant | clean held-out successes (pair ids) |", "|---|---|"]
        for v, ids in succ.items():
            lines.append(f"| {v} | {', '.join(ids) or '—'} |")
    preds = {v: e["eval"]["rule_prediction"] for v, e in eds.items()
             if e["eval"].get("rule_prediction")}
    if preds:
        lines += ["", "| editor variant | generated rule lines | manifested rules | rule precision | rule recall |",
                  "|---|---|---|---|---|"]
        for v, rp in preds.items():
            lines.append(f"| {v} | {rp['generated']} | {rp['gold']} | {cell(rp['precision'])} | "
                         f"{cell(rp['recall'])} |")
    sv = r.get("served")
    if sv:
        lines += ["", "| served mode | tests pass | anti-patterns removed | pass and all removed |",
                  "|---|---|---|---|"]
        for m in ("prompting", "iterative"):
            s = sv[m]
            lines.append(f"| {m} | {cell(s['correct'])} | {cell(s['fixed'])} | {cell(s['success'])} |")
    tg = r.get("targets", {})
    if tg:
        lines += ["", "| target | met | measured |", "|---|---|---|"]
        for k, v in tg.items():
            lines.append(f"| {k} | {verdict(v)} | {v['detail']} |")
    return "\n".join(lines)


def render(results: dict, config: dict) -> str:
    """The tables with the config tag, machine line and wall time (the README's block);
    fills in `editor_format` (older results lack it) and `targets` (a pure function of
    the results) in `results`."""
    results.setdefault("editor_format", config["editor"].get("target_format", "code"))
    results["targets"] = targets(results)
    stages = ", ".join(f"{k} {v / 60:.1f}" for k, v in results.get("stage_s", {}).items())
    resumed = [f"{v} from step {e['train']['resumed_from']}"
               for v, e in results.get("editors", {}).items() if e["train"].get("resumed_from")]
    note = (f"; this invocation resumed {', '.join(resumed)} (trained editors and cached "
            "replies are reused, so its time excludes their training)" if resumed else "")
    return (f"{tables(results)}\n\nConfig `{config['tag']}`; measured on {machine_text(results['machine'])}; "
            f"the last invocation took {results['wall_s'] / 60:.1f} min (stages, min: {stages}"
            f"{note}).")


def _per_perturbation(r: dict) -> list[str]:
    """Rows per (editor, perturbation kind): inputs kept, success clean -> perturbed on
    those inputs, and the drops; so a kind that is a no-op for an editor (renaming under
    identifier abstraction) is visible, not averaged away."""
    eds = r.get("editors", {})
    kept = r.get("perturbations", {}).get("kept", {})
    rows = []
    for v, e in eds.items():
        for k, d in e["eval"].get("drop", {}).items():
            c = e["eval"]["conditions"].get(k, {})
            clean = (c.get("success") or 0.0) + d["success"]
            rows.append(f"| {v} | {k} | {kept.get(k, c.get('n', '—'))} | {cell(clean)} | "
                        f"{cell(c.get('success'))} | {cell(d['success'])} | {cell(d['fixed'])} | "
                        f"{cell(d['correct'])} |")
    if not rows:
        return []
    return ["", "| editor variant | perturbation | inputs | success, clean | success, perturbed | "
            "drop (success) | drop (removed) | drop (tests pass) |",
            "|---|---|---|---|---|---|---|---|", *rows]


def plots(r: dict, plot_dir: str) -> list[str]:
    import matplotlib.pyplot as plt
    import numpy as np
    os.makedirs(plot_dir, exist_ok=True)
    out = []
    eds = r.get("editors", {})
    curves = {v: ([s for s, _ in e["train"]["loss_curve"]], [l for _, l in e["train"]["loss_curve"]])
              for v, e in eds.items() if e["train"].get("loss_curve")}
    if curves:
        out.append(plotting.line_plot(os.path.join(plot_dir, "editor_loss.png"), curves,
                                      xlabel="step", ylabel="masked NLL", logy=True,
                                      title="Editor fine-tuning (assistant tokens)"))
    if eds:
        conds = ["clean"] + [k for k in next(iter(eds.values()))["eval"]["conditions"] if k != "clean"]
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
        for ax, m in zip(axes, ("correct", "fixed", "success")):
            w = 0.8 / len(eds)
            for i, (v, e) in enumerate(eds.items()):
                ys = [e["eval"]["conditions"].get(c, {}).get(m) or 0.0 for c in conds]
                ax.bar(np.arange(len(conds)) + i * w, ys, w, label=v)
            ax.set_xticks(np.arange(len(conds)) + 0.4 - w / 2, conds, fontsize=8)
            ax.set_title(METRIC_NAMES[m])
            ax.set_ylim(0, 1)
        axes[0].legend(fontsize=8)
        out.append(plotting.save(fig, os.path.join(plot_dir, "editing_metrics.png")))
    rec = r.get("rules", {}).get("recovery")
    if rec:
        names = sorted(rec["coverage"])
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.bar(range(len(names)), [rec["coverage"][n] for n in names])
        ax.axhline(0.5, color="gray", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel("coverage by learned rules")
        ax.set_title("Rule recovery per injected rule")
        fig.tight_layout()
        out.append(plotting.save(fig, os.path.join(plot_dir, "rule_recovery.png")))
    return out
