"""The issue's target rules as `report.targets` applies them."""
import numpy as np

from lib.maxentdp import report


def _run(env, algo, evals, goals=None, chunk=1000):
    """evals: (S, chunks) per-seed evaluation returns on the grid chunk, 2·chunk, ..."""
    evals = np.asarray(evals, float)
    r = {"env": env, "algo": algo, "eval_return": evals.tolist(),
         "env_steps": [chunk * (i + 1) for i in range(evals.shape[1])],
         "final_return_mean": float(evals[:, -1].mean()),
         "final_return_std": float(evals[:, -1].std(ddof=1))}
    if goals is not None:
        r["multigoal"] = {"stochastic": {"distinct_goals": goals}}
    return r


def test_targets_met_and_missed():
    runs = {"multigoal_maxentdp": _run("multigoal", "maxentdp", [[-100], [-90]], [4, 4, 4]),
            "multigoal_sac": _run("multigoal", "sac", [[-90], [-80]], [1, 2, 1]),
            "pendulum_maxentdp": _run("pendulum", "maxentdp", [[-300], [-300]]),
            "pendulum_sac": _run("pendulum", "sac", [[-200], [-220]])}
    t = report.targets(runs)
    assert t["multigoal_all_goals"]["met"]
    assert not t["pendulum_final_return"]["met"]          # −300 < −210 − 14.1
    runs["pendulum_maxentdp"] = _run("pendulum", "maxentdp", [[-250], [-200]])  # within spread
    runs["multigoal_maxentdp"]["multigoal"]["stochastic"]["distinct_goals"] = [4, 3, 4]
    t = report.targets(runs)
    assert t["pendulum_final_return"]["met"] and not t["pendulum_final_return"]["ahead"]
    assert report.target_verdict(t["pendulum_final_return"]) == (
        "MET within the spread only (MaxEntDP's mean below SAC's)")
    assert not t["multigoal_all_goals"]["met"]
    del runs["multigoal_sac"]["multigoal"]                 # SAC still training: no verdict yet
    assert "multigoal_all_goals" not in report.targets(runs)


def test_targets_compare_at_the_last_common_step():
    """A budget-stopped MaxEntDP run (2 evaluations) is compared with SAC's 2nd evaluation,
    not with SAC's final one."""
    runs = {"hopper_maxentdp": _run("hopper", "maxentdp", [[10, 100], [20, 110]]),
            "hopper_sac": _run("hopper", "sac", [[10, 90, 500], [30, 100, 520]])}
    t = report.targets(runs)["hopper_final_return"]
    assert t["env_steps"] == 2000 and t["sac"] == 95.0 and t["maxentdp"] == 105.0 and t["met"]
    assert report.target_verdict(t) == "MET"                # ahead on the mean
    runs["hopper_maxentdp"]["env_steps"] = []              # a run the budget never started
    assert "hopper_final_return" not in report.targets(runs)


def test_per_seed_multigoal_table_lists_goals_counts_and_returns():
    mg = {"rollouts": 10, "goals": [], "stochastic": {
        "goal_counts": [[3, 2, 4, 1], [10, 0, 0, 0]], "distinct_goals": [4, 1],
        "reached_fraction": [1.0, 1.0], "goal_entropy": [1.28, 0.0], "return": [-95.25, -80.0]},
        "eval": {"goal_counts": [[0, 10, 0, 0], [10, 0, 0, 0]], "distinct_goals": [1, 1],
                 "reached_fraction": [1.0, 1.0], "goal_entropy": [0.0, 0.0],
                 "return": [-70.0, -60.04]}}
    run = {"env": "multigoal", "algo": "maxentdp", "num_seeds": 2, "env_steps": [5000],
           "planned_env_steps": 5000, "final_return_mean": -1.0, "final_return_std": 0.0,
           "final_alpha": [10.0, 10.0], "env_steps_per_sec": 3.0, "wall_s": 9.0,
           "multigoal": mg}
    text = report.tables({"runs": {"multigoal_maxentdp": run}})
    assert "| maxentdp | 0 | 4 | (3, 2, 4, 1) | -95.2 | 1 | (0, 10, 0, 0) | -70.0 |" in text
    assert "| maxentdp | 1 | 1 | (10, 0, 0, 0) | -80.0 | 1 | (10, 0, 0, 0) | -60.0 |" in text
