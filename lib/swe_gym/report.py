"""SWE-Gym's targets and results tables (rendered from results.json; spliced into the
README by tools/results.py --paper=swe_gym).

    results["targets"] = targets(config, round0_rate, rounds, curves, rechecked)
    text = render(results)
"""
from __future__ import annotations

from lib.toolbox import stats
from lib.common.report import cell, machine_text, target, verdict


def targets(config, round0_rate: float, rounds: list[dict], curves: dict,
            rechecked: list[list]) -> dict:
    """The three targets: the last fine-tuned round beats round 0 on the
    held-out instances (gain > eval.target_gain, one-sided McNemar p < 0.05); Best@K rises
    with K and stays above Pass@1 by more than 2 subsampling sd of Pass@1; the grader
    agrees with the direct re-run on every recheck row. `curves`: {K (int): curve}."""
    last = next((r for r in reversed(rounds) if "rate" in r), None)
    gain = last["rate"] - round0_rate if last else None
    test = last["vs_round0"] if last else {"wins": 0, "losses": 0, "p": 1.0}
    ks = sorted(curves)
    best = [curves[k]["best_mean"] for k in ks]
    pass1 = curves[ks[0]]["pass_mean"]
    margin = 2 * curves[ks[0]]["pass_std"]
    best_rises = all(b2 >= b1 for b1, b2 in zip(best, best[1:])) and best[-1] > best[0] + margin
    best_above = all(curves[k]["best_mean"] > pass1 + margin for k in ks if k > 1)
    agree = sum(r[2] == r[3] for r in rechecked)
    return {
        "rft_gain": target(gain is not None and gain > config.eval.target_gain
                           and test["p"] < 0.05,
                           round0=round0_rate, final=last["rate"] if last else None,
                           round=last["round"] if last else None, gain=gain,
                           wins=test["wins"], losses=test["losses"], p_value=test["p"]),
        "best_at_k_rises_above_pass1": target(best_rises and best_above, best=best,
                                              pass1=pass1, margin=margin),
        "grader_agrees_with_rerun": target(agree == len(rechecked), agree=agree,
                                           checked=len(rechecked)),
    }


def policy_rows(results: dict) -> list[tuple[str, str, float, int, int]]:
    """(policy, training data, rate, resolved, n) for the table and the bar plot."""
    rows = [("search baseline", "—", results["search"]["rate"], results["search"]["resolved"],
             results["search"]["n"]),
            ("workspace LM (base)", f"{results['lm']['pretrain_examples']} synthetic repairs",
             results["base"]["rate"], results["base"]["resolved"], results["base"]["n"])]
    w = results.get("warm") or {}
    if "rate" in w:
        rows.append(("round 0: warm start", f"base + {w['demonstrations']} search-baseline "
                     "trajectories", w["rate"], w["resolved"], w["n"]))
    for r in results["rounds"]:
        if "rate" in r:
            rows.append((f"round {r['round']}: expert iteration", f"round 0 + "
                         f"{r['train_trajectories']} own trajectories ({r['train_instances']} "
                         "instances)", r["rate"], r["resolved"], r["n"]))
    for key, r in results["rft"].items():
        if "rate" in r:
            rows.append((f"RFT {key.replace('_', ' ')}", f"round 0 + {r['trajectories']} own "
                         f"trajectories ({r['instances']} instances)", r["rate"], r["resolved"],
                         r["n"]))
    if results.get("served"):
        s = results["served"]
        rows.append((f"served {s['model']}", "—", s["rate"], s["resolved"], s["n"]))
    return rows


def _policies(results: dict) -> list[str]:
    """The benchmark line and the resolve rate of every policy."""
    inst = results["instances"]
    lines = [f"Benchmark: {inst['total']} validated instances from "
             f"{inst['train_repos'] + len(inst['test_repos'])} generated repositories "
             f"({inst['train']} train / {inst['test']} held-out in {len(inst['test_repos'])} "
             f"repositories); bug kinds {inst['by_kind']}; generation rejected "
             f"{inst['generation']['rejected']}.", "",
             "| policy | training data | held-out resolved | rate [95 % Wilson] |",
             "|---|---|---|---|"]
    for name, data, rate, k, n in policy_rows(results):
        lo, hi = stats.wilson_interval(k, n)
        lines.append(f"| {name} | {data} | {k}/{n} | {cell(rate, 3, 'f')} "
                     f"[{cell(lo, 2, 'f')}, {cell(hi, 2, 'f')}] |")
    return lines


def _expert_iteration(results: dict) -> list[str]:
    """The warm-start line and the per-round table."""
    ei, w = results["expert_iteration"], results.get("warm") or {}
    lines = [""]
    if w:
        lines += [f"Warm start: the search baseline resolved {w['search_resolved']}/"
                  f"{w['instances']} training instances; {w['demonstrations']} of those "
                  "trajectories are expressible as fix(line, op) and were used.", ""]
    lines += [f"Expert iteration on {ei['instances']} training instances × {ei['rollouts']} "
              f"rollouts per round (T = {ei['temperature']}, batched sampling); each round "
              f"fine-tunes round 0 on all own resolved trajectories so far (cap "
              f"{ei['main_cap'] or 'none'} per instance); paired test vs round 0 on the "
              "held-out instances (exact one-sided McNemar):", "",
              "| round | sampled | resolved (yield) | instances solved | distinct patches | "
              "trained on | held-out | vs round 0: gained / lost, p |",
              "|---|---|---|---|---|---|---|---|"]
    for r in results["rounds"]:
        held = f"{cell(r['rate'], 3, 'f')}" if "rate" in r else "— (no data)"
        vs = (f"{r['vs_round0']['wins']} / {r['vs_round0']['losses']}, "
              f"{cell(r['vs_round0']['p'], 2, 'f')}" if "vs_round0" in r else "—")
        lines.append(f"| {r['round']} | {r['sampled']} | {r['sample_resolved']} "
                     f"({cell(r['yield'], 3, 'f')}) | {r['instances_with_success']}/"
                     f"{ei['instances']} | {r['distinct_patches']} | {r['train_trajectories']} | "
                     f"{held} | {vs} |")
    lines += ["", f"{ei['exported_chat_jsonl']} resolved own trajectories exported as chat JSONL.",
              ""]
    return lines


def _scaling(results: dict) -> list[str]:
    """Pass@K / Best@K table and the verifier line."""
    sc = results["scaling"]
    curves = {int(k): v for k, v in sc["curves"].items()}
    lines = [f"Pass@K / Best@K ({sc['policy']}, {sc['instances']} held-out instances × "
             f"{sc['rollouts']} rollouts; mean ± sd over 100 subsamples):", "",
             "| K | Pass@K | Best@K (verifier) | Pass@K closed form |", "|---|---|---|---|"]
    for k in sorted(curves):
        c = curves[k]
        lines.append(f"| {k} | {cell(c['pass_mean'], 3, 'f')} ± {cell(c['pass_std'], 3, 'f')} | "
                     f"{cell(c['best_mean'], 3, 'f')} ± {cell(c['best_std'], 3, 'f')} | "
                     f"{cell(c['pass_exact'], 3, 'f')} |")
    if "verifier_heldout" in sc:
        v = sc["verifier_heldout"]
        lines += ["", f"Verifier on the held-out rollouts: accuracy {cell(v['accuracy'], 3, 'f')}, "
                  f"AUC {cell(v['auc'], 3, 'f')} (trained on "
                  f"{results['verifier'].get('train_conversations', 0)} balanced conversations)."]
    return lines


def _targets(results: dict) -> list[str]:
    """The targets table, grading and machine lines."""
    t = results["targets"]
    g = t["rft_gain"]
    return ["", "| target | measured | verdict |", "|---|---|---|",
              f"| fine-tuning on its own resolved trajectories raises the held-out resolve rate "
              f"(last round vs round 0, one-sided exact McNemar p < 0.05) | round 0 "
              f"{cell(g['round0'], 3, 'f')} → round {g['round']} {cell(g['final'], 3, 'f')} "
              f"({g['wins']} gained, {g['losses']} lost; p = {cell(g['p_value'], 3, 'f')}) | "
              f"{verdict(g)} |",
              f"| Best@K rises with K and stays above Pass@1 (by > 2 sd of Pass@1) | Best@K "
              f"{', '.join(cell(b, 3, 'f') for b in t['best_at_k_rises_above_pass1']['best'])}; "
              f"Pass@1 {cell(t['best_at_k_rises_above_pass1']['pass1'], 3, 'f')} | "
              f"{verdict(t['best_at_k_rises_above_pass1'])} |",
              f"| grader = direct re-run (gold and empty patch, held-out) | "
              f"{t['grader_agrees_with_rerun']['agree']}/{t['grader_agrees_with_rerun']['checked']} | "
              f"{verdict(t['grader_agrees_with_rerun'])} |",
              "", f"Grading: about {results['grade_cache']['rollouts']} graded rollouts in all "
              f"stages, {results['grade_cache']['entries']} distinct (instance, patch) pairs "
              "graded by pytest (the grade cache on disk; search-baseline verdicts of the "
              "earlier run are not in it).",
              "", f"Measured on {machine_text(results['machine'])}; stages took "
              f"{results.get('stages_total_wall_s', results['wall_s']):.0f} s in all "
              f"({', '.join(f'{k} {v:.0f} s' for k, v in results['stage_wall_s'].items())})."]


def render(results: dict, config: dict | None = None) -> str:
    """Markdown tables of results.json (`config` unused; `report.results_tool`'s signature)."""
    del config
    return "\n".join(_policies(results) + _expert_iteration(results) + _scaling(results)
                     + _targets(results))
