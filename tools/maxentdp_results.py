"""Print a MaxEntDP run's tables and put them, with the plots' paths, into the README.

    python tools/maxentdp_results.py --workdir=workdirs/maxentdp_quick \
        --readme=experiments/maxentdp/README.md --tag=quick

Reads `<workdir>/results.json` (written by experiments/maxentdp/main.py), renders the
returns / multi-goal / targets tables (`lib.maxentdp.report.tables`) with the machine line
and the return curves per environment (mean of the seeds at each evaluation), and with
the tables of `<workdir>/diagnosis.json` when experiments/maxentdp/diagnose_multigoal.py
wrote one there, and with `--readme` replaces the text between `<!-- results:TAG:begin -->` and
`<!-- results:TAG:end -->` there.

Runs made in separate workdirs (e.g. one process per agent on an accelerator lease) are
rendered together with `--merge=DIR,DIR` (their runs join those of `--workdir`; the targets
are recomputed over all of them), and `--from_metrics` rebuilds every run's entry from its
`runs/<env>_<algo>/metrics.jsonl`, which holds every evaluated chunk even when the process
was killed after its last results.json write; `--plot_dir` writes the merged return plots.

    python tools/maxentdp_results.py --workdir=workdirs/gpu_lease/maxentdp/hopper_maxentdp \
        --merge=workdirs/gpu_lease/maxentdp/hopper_sac --from_metrics \
        --plot_dir=workdirs/maxentdp_h200_plots --readme=experiments/maxentdp/README.md \
        --tag=gpu_hopper
"""
from __future__ import annotations

import json
import os

import numpy as np
from absl import flags

import ml_collections

from lib.common import workdir as wd
from lib.common.report import cell, results_tool
from lib.maxentdp import report
from lib.maxentdp.report import tables

flags.DEFINE_list("merge", [], "more workdirs whose runs join those of --workdir")
flags.DEFINE_bool("from_metrics", False, "rebuild each run's entry from its metrics.jsonl")
flags.DEFINE_string("plot_dir", None, "write the return plots of the (merged) runs here")


def metrics_entry(workdir: str, config: dict, entry: dict) -> dict:
    """A run's results entry rebuilt from its metrics.jsonl (all evaluated chunks), keeping
    how the stored entry says the run ended."""
    from experiments.maxentdp import train                 # jax and the agents: only here

    run = train.run_config(ml_collections.ConfigDict(config), entry["env"])
    run_dir = os.path.join(workdir, "runs", f"{entry['env']}_{entry['algo']}")
    new = train.partial_record(run_dir, entry["env"], entry["algo"], run, entry["wall_s"])
    new.update(in_progress=False, budget_stopped=entry.get("budget_stopped", False),
               preempted=bool(entry.get("preempted") or entry.get("in_progress")))
    return new


def collect(results: dict, workdirs: list[str], from_metrics: bool) -> dict:
    """`results` of the first workdir with the runs of all `workdirs` and their targets."""
    runs = {}
    for w in workdirs:
        res = results if w == workdirs[0] else wd.read_json(os.path.join(w, wd.RESULTS))
        config = wd.read_json(os.path.join(w, wd.CONFIG))
        for name, entry in res["runs"].items():
            runs[name] = metrics_entry(w, config, entry) if from_metrics else entry
    return {**results, "runs": runs, "targets": report.targets(runs),
            "budget_stopped": [k for k, r in runs.items() if r.get("budget_stopped")]}


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


def render(results: dict, config: dict) -> str:
    workdir = flags.FLAGS.workdir                 # the plots' paths are given relative to it
    if flags.FLAGS.merge or flags.FLAGS.from_metrics:
        results = collect(results, [workdir] + list(flags.FLAGS.merge), flags.FLAGS.from_metrics)
    if flags.FLAGS.plot_dir:
        results["plots"] = report.plots(results["runs"], flags.FLAGS.plot_dir)
        workdir = "."                             # paths then given from the current folder
    plots = ", ".join(f"`{os.path.relpath(p, workdir)}`" for p in results.get("plots", []))
    diag_path = os.path.join(workdir, "diagnosis.json")
    diag = ""
    if os.path.exists(diag_path):
        with open(diag_path) as f:
            diag = diagnosis_tables(json.load(f)) + "\n\n"
    budget = ""
    if flags.FLAGS.from_metrics:
        dirs = ", ".join(f"`{w}`" for w in [flags.FLAGS.workdir] + list(flags.FLAGS.merge))
        budget = ("Entries rebuilt from each run's metrics.jsonl (every evaluated chunk) in "
                  f"{dirs}; \"SIGTERM\" marks a process killed after its last chunk.\n\n")
    elif results.get("time_budget_s") is not None:
        stopped = ", ".join(results.get("budget_stopped", [])) or "none"
        budget = (f"Wall-clock budget {results['time_budget_s']:g} s for the process "
                  f"(runs stopped by it: {stopped}); "
                  f"{'complete' if results.get('complete', True) else 'INCOMPLETE (killed)'}"
                  " results.json.\n\n")
    return (f"{tables(results)}\n\n{curves(results)}\n\n{diag}{budget}"
            f"Plots in the workdir: {plots}.\n\n"
            f"Config `{config['tag']}`; measured on {results['machine']} "
            f"(shared with other jobs) in {results['wall_s']:.0f} s "
            "(env steps/s: after compilation, all seeds together).")


if __name__ == "__main__":
    results_tool("maxentdp", render)
