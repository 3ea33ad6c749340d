"""The risk-IRL targets and the markdown tables of a run's results.json (the README's measured
tables); `render` is what `tools/results.py --paper=risk_irl` prints and splices."""
from __future__ import annotations

import json

import numpy as np

from lib.common import report
from lib.risk_irl.utilities import FAMILIES


def by_number(d: dict) -> list:
    """Items of a dict keyed by numbers as strings ("20", "100", …), in numeric order (JSON
    files store keys sorted as text)."""
    return sorted(d.items(), key=lambda kv: float(kv[0]))


def _f(x, digits: int = 3) -> str:
    return report.cell(x, digits, "f")


def _mark(x) -> str:
    """A target's verdict (a record, or a bare bool of an older results.json) in bold."""
    return "**met**" if report.met_of(x) else "**missed**"


def investment_tables(results: dict) -> str:
    inv = results["investment"]
    steps, adam = inv["step_sizes"], inv["adam_step_sizes"]
    j = steps.index(inv["target_step_size"])
    fams = [f for f in FAMILIES if f in next(iter(inv["experts"].values()))["caty"]]
    head = ("CATY-UL on the investment MDP: Ĉ(U) (relative) for the demonstrations of experts "
            "optimal for one utility (rows); ✓ = judged compatible (Ĉ ≤ τ).\n\n"
            f"| expert \\ U | {' | '.join(fams)} | τ (linear U) |\n|---|{'---|' * (len(fams) + 1)}")
    rows = []
    for expert in inv["expert_order"]:
        e = inv["experts"][expert]
        cells = [f"{_f(e['caty'][f]['absolute'])} ({_f(e['caty'][f]['relative'], 2)})"
                 f"{' ✓' if e['caty'][f]['compatible'] else ''}" for f in fams]
        rows.append(f"| {expert} | {' | '.join(cells)} | {_f(e['caty']['linear']['threshold'])} |")
    t1 = "\n".join([head, *rows])
    head = (f"TRACTOR-UL on the investment MDP, experts deviating from the optimum in "
            f"{100 * inv['noise']:.0f} % of their actions (mean over seeds; C of the averaged "
            "utility after T iterations): start C(U_0), final C(Ū_T) per step size α (SGD) and Adam, "
            f"ratio at α = {inv['target_step_size']:g}, RMS distance of Ū_T to the true U.\n\n"
            f"| expert | start | C(U_0) | {' | '.join(f'α = {a:g}' for a in steps)} | "
            f"{' | '.join(f'Adam {a:g}' for a in adam)} | ratio | RMS(Ū_T − U) | ≤ 1/3 |\n"
            f"|---|---|---|{'---|' * (len(steps) + len(adam) + 3)}")
    rows = []
    for expert in inv["expert_order"]:
        e = inv["experts"][expert]
        s, a = e["sgd"], e["adam"]
        for i, f in enumerate(inv["inits"]):
            key = f"{expert}<-{f}"
            tgt = results["targets"].get("investment_third", {}).get(key)
            rows.append(
                f"| {expert} | {f} | {_f(s['c0'][i][j])} | "
                f"{' | '.join(_f(s['cT'][i][k]) for k in range(len(steps)))} | "
                f"{' | '.join(_f(a['cT'][i][k]) for k in range(len(adam)))} | "
                f"{_f(s['ratio'][i][j], 2)} | {_f(s['rmse_true'][i][j])} | "
                f"{'n/a (C(U_0) ≤ τ)' if tgt is None else _mark(tgt)} |")
    return t1 + "\n\n" + "\n".join([head, *rows])


def participants_tables(results: dict) -> str:
    p = results["participants"]
    steps = p["step_sizes"]
    j = steps.index(p["target_step_size"])
    counts = p["non_markovian_groups"]
    lines = [f"Non-Markovian behaviour: **{p['num_non_markovian']} of {p['num_participants']}** "
             "participants answer some (step, state) question differently at different "
             f"cumulative rewards (per participant: {counts}).", "",
             "CATY-UL, relative Ĉ(U) for each participant's demonstrations (✓ = compatible):", "",
             "| participant | SG utility | linear | sqrt | square |", "|---|---|---|---|---|"]
    for i, row in enumerate(p["caty"]):
        lines.append(f"| {i} | " + " | ".join(
            f"{_f(row[k]['relative'], 2)}{' ✓' if row[k]['compatible'] else ''}"
            for k in ("sg", "linear", "sqrt", "square")) + " |")
    s, a = p["sgd"], p["adam"]
    lines += ["", f"TRACTOR-UL on participant {p['participant']} (mean over seeds; the notes' table "
              "from the paper's stored results: linear 0.442 → 0.060 at α = 100, sqrt 0.419 → "
              "0.066, square 0.258 → 0.065):", "",
              f"| start | C(U_0) | {' | '.join(f'α = {x:g}' for x in steps)} | "
              f"{' | '.join(f'Adam {x:g}' for x in p['adam_step_sizes'])} | ratio | ≤ 1/3 |",
              f"|---|---|{'---|' * (len(steps) + len(p['adam_step_sizes']) + 2)}"]
    for i, f in enumerate(p["inits"]):
        lines.append(f"| {f} | {_f(s['c0'][i][j])} | "
                     f"{' | '.join(_f(s['cT'][i][k]) for k in range(len(steps)))} | "
                     f"{' | '.join(_f(a['cT'][i][k]) for k in range(len(p['adam_step_sizes'])))} | "
                     f"{_f(s['ratio'][i][j], 2)} | "
                     f"{_mark(results['targets']['participant_third'][f])} |")
    return "\n".join(lines)


def random_table(results: dict) -> str:
    r = results["random"]
    lines = [f"TRACTOR-UL on random MDPs (α = {r['step_size']:g}, noisy convex-concave expert, "
             "start linear; C scored every "
             f"{r['eval_every']} iterations; paper's stored runs: 0.405 → 0.119, 0.394 → 0.118, "
             "0.430 → 0.128):", "",
             "| \\|S\\| | \\|A\\| | seeds | C(U_0) | C(Ū_T) | ratio | first t with C ≤ C_0/3 "
             "| RMS(Ū_T − U) | wall s | ≤ 1/3 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, v in by_number(r["sizes"]):
        lines.append(f"| {v['num_states']} | {v['num_actions']} | {v['num_seeds']} | {_f(v['c0'])} "
                     f"| {_f(v['cT'])} ± {_f(v['cT_se'])} | {_f(v['ratio'], 2)} | "
                     f"{v['iters_to_third'] if v['iters_to_third'] is not None else 'never'} | "
                     f"{_f(v['rmse_true'])} | {v['wall_s']:.0f} | "
                     f"{_mark(results['targets']['random_third'][k])} |")
    lines.append("")
    lines.append("Rate not growing with |S| (first t at ≤ C_0/3 never later than at the smallest "
                 f"|S| plus one scoring period): {_mark(results['targets']['random_rate_not_growing'])}.")
    return "\n".join(lines)


def multi_env_table(results: dict) -> str:
    m = results["multi_env"]
    lines = ["TRACTOR-UL with N environments (max_i C_i of the averaged utility, mean over seeds):",
             "", "| N | max C(U_0) | max C(Ū_T) | ratio | RMS(Ū_T − U) | ≤ 1/3 |",
             "|---|---|---|---|---|---|"]
    for k, v in by_number(m["runs"]):
        lines.append(f"| {k} | {_f(v['c0'])} | {_f(v['cT'])} ± {_f(v['cT_se'])} | "
                     f"{_f(v['ratio'], 2)} | {_f(v['rmse_true'])} | "
                     f"{_mark(results['targets']['multi_env_third'][k])} |")
    tols = m["set_tolerances"]
    lines += ["", f"The compatible set: of {m['set_samples']} random utilities of 𝒰_L (RMS distance "
              f"to the true U {_f(m['rmse_all_candidates'])} on average), the fraction with "
              "max_i C_i(U) ≤ tolerance in all of the first N environments (exact return "
              f"distributions, noise-free experts; tolerance {tols[0]:g} = exact compatibility "
              "up to float32 rounding), with the RMS distance to the true U of the compatible ones:",
              "", f"| N | {' | '.join(f'fraction (tol {t:g})' for t in tols)} | RMS(U − U_true), "
              f"tol {tols[0]:g} | median max_i C_i | max_i C_i(U_true) |",
              f"|---|{'---|' * (len(tols) + 3)}"]
    for k, v in by_number(m["set"]):
        rows = v["by_tolerance"]
        lines.append(f"| {k} | " + " | ".join(f"{_f(r['fraction'])} ± {_f(r['fraction_se'])}"
                                              for r in rows)
                     + f" | {_f(rows[0]['rmse_compatible'])} | {v['median_max_c']:.1e} | "
                     f"{v['true_max_c']:.1e} |")
    lines += ["", "More environments shrink the compatible set (fraction at the largest N below the "
              "smallest N's by more than 2 s.e., smallest tolerance): "
              f"{_mark(results['targets']['compatible_set_shrinks'])}."]
    return "\n".join(lines)


def tables(results: dict) -> str:
    """All tables of the parts present in `results`, as one markdown string."""
    parts = []
    if "investment" in results:
        parts.append("### Investment MDP, simulated experts\n\n" + investment_tables(results))
    if "participants" in results:
        parts.append("### Investment MDP, the 15 participants\n\n" + participants_tables(results))
    if "random" in results:
        parts.append("### Random MDPs\n\n" + random_table(results))
    if "multi_env" in results:
        parts.append("### Several environments\n\n" + multi_env_table(results))
    return "\n\n".join(parts)


def _third(ratio: float, **more) -> dict:
    """The target C(Ū_T) ≤ C(U_0)/3, a record with the ratio (and `more` numbers)."""
    return report.target(ratio <= 1 / 3, ratio=ratio, **more)


def targets(results: dict, config) -> dict:
    """The targets from the parts that ran: C falls to ≤ 1/3 of its start on every
    setting, at a rate not growing with |S|; more environments shrink the compatible set.
    Each is a target record with the numbers behind it; the counts beside them
    (num_non_markovian, random_iters_to_third) and `all_met` (every record met) stay plain
    values, as before records."""
    out = {}
    if "investment" in results:
        inv = results["investment"]
        j = inv["step_sizes"].index(inv["target_step_size"])
        rows = {}
        for expert in inv["expert_order"]:
            e = inv["experts"][expert]
            for i, f in enumerate(inv["inits"]):
                c0, tau = e["sgd"]["c0"][i][j], e["caty_true_noisy"]["threshold"]
                if c0 > tau:                      # a start that is not already compatible
                    rows[f"{expert}<-{f}"] = _third(e["sgd"]["ratio"][i][j], c0=c0, tau=tau)
        out["investment_third"] = rows
    if "participants" in results:
        p = results["participants"]
        j = p["step_sizes"].index(p["target_step_size"])
        out["participant_third"] = {f: _third(p["sgd"]["ratio"][i][j])
                                    for i, f in enumerate(p["inits"])}
        out["num_non_markovian"] = p["num_non_markovian"]
    if "random" in results:
        sz = dict(by_number(results["random"]["sizes"]))
        out["random_third"] = {k: _third(v["ratio"]) for k, v in sz.items()}
        iters = [v["iters_to_third"] for v in sz.values()]
        first, every = iters[0], results["random"]["eval_every"]
        out["random_iters_to_third"] = {k: v["iters_to_third"] for k, v in sz.items()}
        out["random_rate_not_growing"] = report.target(
            all(i is not None for i in iters) and all(i <= first + every for i in iters[1:]),
            iters_to_third=iters, eval_every=every)
    if "multi_env" in results:
        me = results["multi_env"]
        out["multi_env_third"] = {k: _third(v["ratio"]) for k, v in by_number(me["runs"])}
        keys = [k for k, _ in by_number(me["set"])]
        lo, hi = me["set"][keys[0]]["by_tolerance"][0], me["set"][keys[-1]]["by_tolerance"][0]
        se = np.hypot(hi["fraction_se"], lo["fraction_se"])
        out["compatible_set_shrinks"] = report.target(
            hi["fraction"] + 2 * se < lo["fraction"], fraction_smallest_n=lo["fraction"],
            fraction_largest_n=hi["fraction"], se_difference=se)
    out["all_met"] = all(r["met"] for _, r in report.walk_targets(out))
    return out


def render(results: dict, config: dict) -> str:
    """The README block: the tables, the targets, the config tag, machine and part times."""
    walls = ", ".join(f"{k} {v:.0f} s" for k, v in results["parts_wall_s"].items())
    bare = report.met_tree(results["targets"])    # records as bools: the text of old results
    return (f"{tables(results)}\n\nTargets: `{json.dumps(bare)}`\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']}; parts took {walls} "
            "(wall clock on a shared, heavily loaded machine).")


RESULTS_WORKDIR = "workdirs/risk_irl_quick_humans"
