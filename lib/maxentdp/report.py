"""Targets, tables, the results-tool `render` and plots of a MaxEntDP run (`results.json`
-> markdown and PNGs)."""
from __future__ import annotations

import json
import os

import numpy as np

from lib.common import workdir as wd
from lib.common.report import cell, machine_text, read_results, target, verdict
from lib.toolbox import plotting


def targets(runs: dict) -> dict:
    """The targets from the runs: multi-goal coverage and final returns."""
    out = {}
    mg_d, mg_s = runs.get("multigoal_maxentdp"), runs.get("multigoal_sac")
    if mg_d and mg_s and "multigoal" in mg_d and "multigoal" in mg_s:   # both analysed
        d = mg_d["multigoal"]["stochastic"]["distinct_goals"]
        s = mg_s["multigoal"]["stochastic"]["distinct_goals"]
        out["multigoal_all_goals"] = target(
            min(d) == 4 and np.mean(s) < 4, maxentdp_distinct_goals=d, sac_distinct_goals=s,
            rule="every MaxEntDP seed reaches all 4 goals and SAC reaches fewer on average")
    envs = sorted({r["env"] for r in runs.values()} - {"multigoal"})
    for env in envs:
        d, s = runs.get(f"{env}_maxentdp"), runs.get(f"{env}_sac")
        if not (d and s and d["env_steps"] and s["env_steps"]):
            continue
        # Compare at the last evaluation both runs reached (budget-stopped runs end early;
        # both agents of an environment share the evaluation grid).
        common = min(d["env_steps"][-1], s["env_steps"][-1])
        dm, dsd = at_step(d, common)
        sm, ssd = at_step(s, common)
        spread = max(dsd, ssd)
        out[f"{env}_final_return"] = target(
            dm >= sm - spread, env_steps=common, maxentdp=dm, sac=sm, spread=spread,
            ahead=dm >= sm,
            rule="MaxEntDP mean >= SAC mean - max(seed std of either), at the last "
                 "evaluation both reached")
    return out


def target_verdict(v: dict) -> str:
    """MET / MISSED, naming the criterion where a return target is met only within the
    seeds' spread (MaxEntDP's mean below SAC's)."""
    if v["met"] and v.get("ahead") is False:
        return f"{verdict(v)} within the spread only (MaxEntDP's mean below SAC's)"
    return verdict(v)


def at_step(run: dict, env_steps: int) -> tuple[float, float]:
    """(mean, sd over seeds) of a run's evaluation at `env_steps` (one of its grid points)."""
    i = run["env_steps"].index(env_steps)
    y = np.asarray(run["eval_return"], np.float64)[:, i]          # (S,)
    return float(y.mean()), float(y.std(ddof=1)) if y.size > 1 else 0.0


def tables(results: dict) -> str:
    runs = results["runs"]
    lines = ["| env | agent | seeds | env steps | final eval return (mean ± sd) | α (final, mean) "
             "| env steps/s (all seeds) | wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in runs.values():
        steps = str(r["env_steps"][-1]) if r["env_steps"] else "0"
        if r.get("budget_stopped"):
            steps += f" of {r['planned_env_steps']} (time budget)"
        elif r.get("preempted"):
            steps += f" of {r['planned_env_steps']} (SIGTERM)"
        elif r.get("in_progress"):
            steps += " (running)"
        final = (f"{cell(r['final_return_mean'], 1, 'f')} ± {cell(r['final_return_std'], 1, 'f')}"
                 if r["final_return_mean"] is not None else "—")
        alpha = cell(float(np.mean(r["final_alpha"])), 3) if r["final_alpha"] else "—"
        lines.append(f"| {r['env']} | {r['algo']} | {r['num_seeds']} | {steps} | {final} | "
                     f"{alpha} | {cell(r['env_steps_per_sec'], 0, 'f')} | "
                     f"{cell(r['wall_s'], 0, 'f')} |")
    mg = [r for r in runs.values() if "multigoal" in r]
    if mg:
        lines += ["", "Multi-goal, episodes from the start state per seed "
                  f"({mg[0]['multigoal']['rollouts']} each): goals reached (of 4), "
                  "entropy of the reached-goal histogram (max ln 4 = 1.386), fraction of "
                  "episodes ending at a goal.", "",
                  "| agent | actions | distinct goals per seed | mean goals | goal entropy "
                  "| reached fraction | return |", "|---|---|---|---|---|---|---|"]
        for r in mg:
            for mode, label in (("stochastic", "one sample (training)"),
                                ("eval", "evaluation rule")):
                m = r["multigoal"][mode]
                lines.append(f"| {r['algo']} | {label} | {m['distinct_goals']} | "
                             f"{cell(float(np.mean(m['distinct_goals'])), 2, 'f')} | "
                             f"{cell(float(np.mean(m['goal_entropy'])), 3, 'f')} | "
                             f"{cell(float(np.mean(m['reached_fraction'])), 2, 'f')} | "
                             f"{cell(float(np.mean(m['return'])), 1, 'f')} |")
    if mg:
        lines += ["", "Per seed: goals reached from s₀ by the episodes above and their counts "
                  "(+x, −x, +y, −y); mean return of those episodes.", "",
                  "| agent | seed | goals (one sample) | counts | return | goals (evaluation "
                  "rule) | counts | return |", "|---|---|---|---|---|---|---|---|"]
        for r in mg:
            st, ev = r["multigoal"]["stochastic"], r["multigoal"]["eval"]
            for i in range(len(st["distinct_goals"])):
                lines.append(f"| {r['algo']} | {i} | {st['distinct_goals'][i]} | "
                             f"{tuple(st['goal_counts'][i])} | {cell(st['return'][i], 1, 'f')} | "
                             f"{ev['distinct_goals'][i]} | {tuple(ev['goal_counts'][i])} | "
                             f"{cell(ev['return'][i], 1, 'f')} |")
    sq = [r for r in mg if "start_state_q" in r["multigoal"]]
    if sq:
        lines += ["", "Critic and policy at the start state s₀ = 0 (per seed): strict local "
                  "maxima of min(Q̄₁, Q̄₂)(s₀, a) on a "
                  f"{sq[0]['multigoal']['start_state_q']['grid']}² action grid; the goal "
                  "sectors' (max_sector Q − max Q)/α, sorted; sector masses of the target "
                  "exp(Q/α) and of the policy (500 samples), largest sector; total-variation "
                  "distance between the two sector distributions.", "",
                  "| agent | Q local maxima | sector gaps / α (mean over seeds) | target mass, "
                  "top sector | policy mass, top sector | TV(target, policy) |",
                  "|---|---|---|---|---|---|"]
        for r in sq:
            q = r["multigoal"]["start_state_q"]
            gaps = np.sort(np.asarray(q["sector_gap_over_alpha"]), axis=1)[:, ::-1].mean(0)
            top_t = [max(m) for m in q["target_sector_mass"]]
            top_p = [max(m) for m in q["policy_sector_mass"]]
            lines.append(f"| {r['algo']} | {q['local_maxima']} | "
                         f"{', '.join(cell(float(g), 2, 'f') for g in gaps)} | "
                         f"{[round(x, 2) for x in top_t]} | {[round(x, 2) for x in top_p]} | "
                         f"{[round(x, 2) for x in q['sector_tv']]} |")
    t = results.get("targets", {})
    if t:
        lines += ["", "| target | measured | met |", "|---|---|---|"]
        for name, v in t.items():
            measured = ", ".join(f"{k} = {cell(x, 4) if isinstance(x, float) else x}"
                                 for k, x in v.items() if k not in ("met", "rule", "ahead"))
            lines.append(f"| {name}: {v['rule']} | {measured} | {target_verdict(v)} |")
    return "\n".join(lines)


def plots(runs: dict, plot_dir: str) -> list[str]:
    import matplotlib.pyplot as plt

    paths = []
    for env in sorted({r["env"] for r in runs.values()}):
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, r in enumerate(v for v in runs.values() if v["env"] == env and v["env_steps"]):
            x = np.asarray(r["env_steps"])
            y = np.asarray(r["eval_return"])                  # (S, chunks)
            m = y.mean(0)
            ax.plot(x, m, color=f"C{i}", label=f"{r['algo']} ({r['num_seeds']} seeds)")
            if y.shape[0] > 1:
                sd = y.std(0, ddof=1)
                ax.fill_between(x, m - sd, m + sd, color=f"C{i}", alpha=0.2)
        ax.set(xlabel="environment steps", ylabel="evaluation return", title=env)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        paths.append(plotting.save(fig, os.path.join(plot_dir, f"returns_{env}.png")))
    mg = [r for r in runs.values() if "multigoal" in r]
    if mg:
        fig, axes = plt.subplots(1, len(mg), figsize=(4 * len(mg), 4), squeeze=False)
        for ax, r in zip(axes[0], mg):
            a = np.asarray(r["multigoal"]["actions_seed0"])
            ax.scatter(a[:, 0], a[:, 1], s=4, alpha=0.5)
            g = np.asarray(r["multigoal"]["goals"]) / np.max(np.abs(r["multigoal"]["goals"]))
            ax.scatter(g[:, 0], g[:, 1], marker="*", s=120, color="red", label="goal directions")
            ax.set(xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), aspect="equal",
                   title=f"{r['algo']}: actions at the origin (seed 0)")
            ax.legend(fontsize=7, loc="lower left")
        paths.append(plotting.save(fig, os.path.join(plot_dir, "multigoal_actions.png")))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        width = 0.8 / len(mg)
        for i, r in enumerate(mg):
            counts = np.asarray(r["multigoal"]["stochastic"]["goal_counts"]).sum(0)
            ax.bar(np.arange(4) + i * width, counts, width, label=r["algo"])
        ax.set_xticks(np.arange(4) + 0.4 - width / 2, ["(+5,0)", "(−5,0)", "(0,+5)", "(0,−5)"])
        ax.set(ylabel="episodes ending at the goal (all seeds)", title="multi-goal: goals reached")
        ax.legend(fontsize=8)
        paths.append(plotting.save(fig, os.path.join(plot_dir, "multigoal_goals.png")))
    return paths


def curves(results: dict) -> str:
    """Evaluation return (mean ± sd over seeds) at every evaluation, one row per run."""
    lines = []
    for r in results["runs"].values():
        sd = r["eval_return_std"] or [0.0] * len(r["eval_return_mean"])
        pts = ", ".join(f"{s}: {cell(m, 0, 'f')} ± {cell(d, 0, 'f')}"
                        for s, m, d in zip(r["env_steps"], r["eval_return_mean"], sd))
        lines.append(f"- {r['env']} / {r['algo']}: {pts or 'no evaluation (not started)'}")
    return "Return curves (environment steps: mean ± sd over seeds):\n\n" + "\n".join(lines)


def _masses(m) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in m) + ")"


def diagnosis_tables(diag: dict) -> str:
    """The tables of experiments/maxentdp/diagnose_multigoal.py's JSON (when present)."""
    out = []
    algos = [k[len("q_over_training_"):] for k in diag if k.startswith("q_over_training_")]
    if algos:
        out += ["Diagnosis (`diagnosis.json`): the critic at the start state over training, "
                "per kept checkpoint; mean over seeds of the target exp(Q/α)'s and the policy's "
                "largest sector mass, of the TV distance between their sector distributions, "
                "and of the second-best sector's gap (max_sector Q − max Q)/α.", "",
                "| agent | env steps | Q local maxima per seed | target top mass | policy top "
                "mass | TV | 2nd sector gap / α |", "|---|---|---|---|---|---|---|"]
        for algo in algos:
            for r in diag[f"q_over_training_{algo}"]:
                gaps = np.sort(np.asarray(r["sector_gap_over_alpha"]), axis=1)[:, ::-1]
                out.append(f"| {algo} | {r['env_steps']} | {r['local_maxima']} | "
                           f"{np.mean([max(m) for m in r['target_sector_mass']]):.2f} | "
                           f"{np.mean([max(m) for m in r['policy_sector_mass']]):.2f} | "
                           f"{np.mean(r['sector_tv']):.2f} | {gaps[:, 1].mean():.2f} |")
        out += ["", "Entropy term against the reward scale (chunk means of the updates): α·H of "
                "a′ ~ π(·|s′), the batch's mean Q, and the last training episodes' return.", "",
                "| agent | env steps | α | α·H | mean Q | training return |",
                "|---|---|---|---|---|---|"]
        for algo in algos:
            for r in diag[f"entropy_scale_{algo}"]:
                out.append(f"| {algo} | {r['env_steps']:.0f} | {cell(r['alpha'], 3)} | "
                           f"{r['alpha_times_entropy']:.2f} | {r['q_mean']:.1f} | "
                           f"{r['train_return']:.1f} |")
    if "fixed_q" in diag:
        out += ["", "QNE with a FIXED 4-mode Q(a) = max_k [h_k − c‖a − 0.6 d_k‖²], α = 1, "
                "T = 10, (64, 64) ε-network, 1,500 updates on uniform replay actions unless "
                "stated, 2,000 samples: sector masses (+x, −x, +y, −y) of the policy against "
                "those of exp(Q/α).", "",
                "| K | c | h | replay actions | target masses | policy masses |",
                "|---|---|---|---|---|---|"]
        for r in diag["fixed_q"]:
            h = r.get("heights", [0.0] * 4)
            rep = (f"{r['replay_on_mode0']:.0%} near mode +x" if r.get("replay_on_mode0")
                   else "uniform")
            out.append(f"| {r['num_candidates']} | {r.get('curvature', 20.0):g} | "
                       f"{_masses(h)} | {rep} | {_masses(r['expected_mass'])} | "
                       f"{_masses(r['sector_mass'])} |")
    return "\n".join(out)


def render(results: dict, config: dict, workdir: str, merge=(), from_metrics: bool = False,
           plot_dir: str | None = None) -> str:
    """The README block of the run in `workdir`: tables, return curves, the diagnosis tables
    of `<workdir>/diagnosis.json` when present, the budget line, plots and machine line.
    With `merge` (more workdirs) or `from_metrics` (entries rebuilt from metrics.jsonl),
    `results` is `collect`'s of them;
    `plot_dir`: write the (merged) return plots there."""
    run_workdir = workdir
    if plot_dir:
        results["plots"] = plots(results["runs"], plot_dir)
        workdir = "."                             # paths then given from the current folder
    listed = ", ".join(f"`{os.path.relpath(p, workdir)}`" for p in results.get("plots", []))
    diag_path = os.path.join(workdir, "diagnosis.json")
    diag = ""
    if os.path.exists(diag_path):
        with open(diag_path) as f:
            diag = diagnosis_tables(json.load(f)) + "\n\n"
    budget = ""
    if from_metrics:
        dirs = ", ".join(f"`{w}`" for w in [run_workdir] + list(merge))
        budget = ("Entries rebuilt from each run's metrics.jsonl (every evaluated chunk) in "
                  f"{dirs}; \"SIGTERM\" marks a process killed after its last chunk.\n\n")
    elif results.get("time_budget_s") is not None:
        stopped = ", ".join(results.get("budget_stopped", [])) or "none"
        budget = (f"Wall-clock budget {results['time_budget_s']:g} s for the process "
                  f"(runs stopped by it: {stopped}); "
                  f"{'complete' if results.get('complete', True) else 'INCOMPLETE (killed)'}"
                  " results.json.\n\n")
    return (f"{tables(results)}\n\n{curves(results)}\n\n{diag}{budget}"
            f"Plots in the workdir: {listed}.\n\n"
            f"Config `{config['tag']}`; measured on "
            f"{machine_text(results['machine'])} in {results['wall_s']:.0f} s "
            "(env steps/s: after compilation, all seeds together).")


def collect(results: dict, workdirs: list[str], from_metrics: bool) -> dict:
    """`results` of the first workdir with the runs of all `workdirs` and their targets;
    with `from_metrics` each entry is rebuilt from its metrics.jsonl (`runs.metrics_entry`,
    which loads jax and the agents)."""
    if from_metrics:
        from lib.maxentdp.runs import metrics_entry
    runs = {}
    for w in workdirs:
        res = results if w == workdirs[0] else read_results(w, "maxentdp")
        config = wd.read_json(os.path.join(w, wd.CONFIG))
        for name, entry in res["runs"].items():
            runs[name] = metrics_entry(w, config, entry) if from_metrics else entry
    return {**results, "runs": runs, "targets": targets(runs),
            "budget_stopped": [k for k, r in runs.items() if r.get("budget_stopped")]}


RESULTS_FLAGS = {
    "merge": ("list", [], "more workdirs whose runs join those of --workdir"),
    "from_metrics": ("bool", False, "rebuild each run's entry from its metrics.jsonl"),
    "plot_dir": ("string", None, "write the return plots of the (merged) runs here")}


def results_block(results: dict, config: dict, workdir: str, merge: list[str],
                  from_metrics: bool, plot_dir: str | None) -> str:
    """`render` of the run in `workdir`, its runs joined by those of `merge` or rebuilt from
    metrics.jsonl (`collect`) when either is asked for."""
    if merge or from_metrics:
        results = collect(results, [workdir, *merge], from_metrics)
    return render(results, config, workdir, merge, from_metrics, plot_dir)


def publish_results(results: dict, config: dict, workdir: str, merge: list[str],
                    from_metrics: bool, plot_dir: str | None) -> dict:
    """The results `tools/results.py --publish` writes for the block of `results_block`: the
    joined runs and their targets (`collect`), "merged" naming the joined workdirs; complete
    only when no entry is of a killed or unfinished process. ValueError naming a joined
    results.json that says "complete": false."""
    if not (merge or from_metrics):
        return results
    for w in merge:
        if read_results(w, "maxentdp").get("complete") is False:
            raise ValueError(f"{os.path.join(w, wd.RESULTS)} says the run is not complete "
                             "(\"complete\": false); rerun it to the end")
    out = collect(results, [workdir, *merge], from_metrics)
    out["complete"] = results.get("complete", True) and not any(
        r.get("preempted") or r.get("in_progress") for r in out["runs"].values())
    out["merged"] = ", ".join(merge)
    return out
