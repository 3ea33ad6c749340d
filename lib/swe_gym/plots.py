"""The plots of a SWE-Gym run: Pass@K / Best@K, resolve rate by policy, expert iteration."""
from __future__ import annotations

import os

from lib.toolbox import plotting, stats
from lib.common import workdir as wd
from lib.swe_gym import report


def write(workdir: str, results: dict) -> None:
    """plots/pass_best_at_k.png, resolve_rates.png and expert_iteration.png of results.json."""
    import matplotlib.pyplot as plt
    curves = results["scaling"]["curves"]
    ks = sorted(int(k) for k in curves)
    c = {int(k): v for k, v in curves.items()}
    plotting.curves_and_points(
        os.path.join(workdir, wd.PLOTS, "pass_best_at_k.png"), curves={},
        points={"Pass@K": (ks, [c[k]["pass_mean"] for k in ks], [c[k]["pass_std"] for k in ks]),
                "Best@K (verifier)": (ks, [c[k]["best_mean"] for k in ks],
                                      [c[k]["best_std"] for k in ks])},
        xlabel="K (rollouts)", ylabel="resolve rate (held-out)", logx=True,
        title=f"{results['scaling']['policy']}: Pass@K vs Best@K")
    rows = report.policy_rows(results)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar(range(len(rows)), [r[2] for r in rows], color=[f"C{i % 10}" for i in range(len(rows))])
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=25, fontsize=7, ha="right")
    ax.set_ylabel("held-out resolve rate")
    ax.set_title("resolve rate by policy")
    plotting.save(fig, os.path.join(workdir, wd.PLOTS, "resolve_rates.png"))
    rounds = [r for r in results["rounds"] if "rate" in r]
    if rounds:
        r0 = results["warm"] if "rate" in results["warm"] else results["base"]
        xs = [0] + [r["round"] for r in rounds]
        ys = [r0["rate"]] + [r["rate"] for r in rounds]
        ci = [stats.wilson_interval(r["resolved"], r["n"]) for r in [r0] + rounds]
        plotting.curves_and_points(
            os.path.join(workdir, wd.PLOTS, "expert_iteration.png"), curves={},
            points={"held-out resolve rate (T = 0, 95 % Wilson)": (
                        xs, ys, [[y - lo for y, (lo, _) in zip(ys, ci)],
                                 [hi - y for y, (_, hi) in zip(ys, ci)]]),
                    "training yield (resolved / sampled)": ([r["round"] for r in rounds],
                                                            [r["yield"] for r in rounds],
                                                            [0.0] * len(rounds))},
            xlabel="expert-iteration round", ylabel="rate", logx=False,
            title="expert iteration of the workspace LM")
