"""The issue's target rules as `report.targets` applies them."""
from lib.maxentdp import report


def _run(env, algo, final, sd, goals=None):
    r = {"env": env, "algo": algo, "final_return_mean": final, "final_return_std": sd}
    if goals is not None:
        r["multigoal"] = {"stochastic": {"distinct_goals": goals}}
    return r


def test_targets_met_and_missed():
    runs = {"multigoal_maxentdp": _run("multigoal", "maxentdp", -100, 5, [4, 4, 4]),
            "multigoal_sac": _run("multigoal", "sac", -90, 5, [1, 2, 1]),
            "pendulum_maxentdp": _run("pendulum", "maxentdp", -300, 50, None),
            "pendulum_sac": _run("pendulum", "sac", -200, 40, None)}
    t = report.targets(runs)
    assert t["multigoal_all_goals"]["met"]
    assert not t["pendulum_final_return"]["met"]          # −300 < −200 − 50
    runs["pendulum_maxentdp"]["final_return_mean"] = -250   # within the spread
    runs["multigoal_maxentdp"]["multigoal"]["stochastic"]["distinct_goals"] = [4, 3, 4]
    t = report.targets(runs)
    assert t["pendulum_final_return"]["met"]
    assert not t["multigoal_all_goals"]["met"]
