"""The risk-IRL target records (lib/risk_irl/report.targets) on a small results dict, and the
README block from the same run stored with records and with the old bare bools."""
from lib.common.report import met_tree, verdict, walk_targets
from lib.risk_irl import report


def _size(n, ratio, iters):
    return {"num_states": n, "num_actions": 3, "num_seeds": 2, "c0": 0.4, "cT": 0.4 * ratio,
            "cT_se": 0.01, "ratio": ratio, "iters_to_third": iters, "rmse_true": 0.2,
            "wall_s": 3.0}


def _set(fraction, se):
    return {"by_tolerance": [{"fraction": fraction, "fraction_se": se, "rmse_compatible": 0.1},
                             {"fraction": 0.9, "fraction_se": 0.01, "rmse_compatible": 0.2}],
            "median_max_c": 0.05, "true_max_c": 1e-7}


RESULTS = {
    "random": {"step_size": 100.0, "eval_every": 5,
               "sizes": {"4": _size(4, 0.25, 10), "10": _size(10, 0.5, None)}},
    "multi_env": {"runs": {"1": {"c0": 0.5, "cT": 0.1, "cT_se": 0.01, "ratio": 0.2,
                                 "rmse_true": 0.3}},
                  "set_tolerances": [1e-5, 1e-2], "set_samples": 100,
                  "rmse_all_candidates": 0.4, "set": {"1": _set(0.5, 0.05), "3": _set(0.1, 0.03)}},
    "parts_wall_s": {"random": 12.0, "multi_env": 30.0}, "machine": "x86_64, 2 CPU cores"}


def test_targets_are_records_beside_the_plain_counts():
    """|S| = 10 ends at half its start (missed) and never reaches a third (so the rate target
    is missed); the compatible set shrinks by more than 2 s.e. (met). The iteration counts
    stay plain values and all_met is the AND of every record."""
    t = report.targets(RESULTS, None)
    assert [(p, verdict(r)) for p, r in walk_targets(t)] == [
        ("random_third.4", "MET"), ("random_third.10", "MISSED"),
        ("random_rate_not_growing", "MISSED"), ("multi_env_third.1", "MET"),
        ("compatible_set_shrinks", "MET")]
    assert t["random_third"]["10"] == {"ratio": 0.5, "met": False}
    assert t["random_rate_not_growing"] == {"iters_to_third": [10, None], "eval_every": 5,
                                            "met": False}
    assert t["random_iters_to_third"] == {"4": 10, "10": None} and t["all_met"] is False
    fine = dict(RESULTS, random=dict(RESULTS["random"], sizes={"4": _size(4, 0.25, 10)}))
    assert report.targets(fine, None)["all_met"] is True


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    new = dict(RESULTS, targets=report.targets(RESULTS, None))
    old = dict(RESULTS, targets=met_tree(new["targets"]))     # the form stored before records
    assert old["targets"]["random_third"] == {"4": True, "10": False}
    text = report.render(new, {"tag": "tiny"})
    assert report.render(old, {"tag": "tiny"}) == text
    assert "| 10 | 3 | 2 | 0.400 | 0.200 ± 0.010 | 0.50 | never | 0.200 | 3 | **missed** |" in text
    assert ("Targets: `{\"random_third\": {\"4\": true, \"10\": false}, \"random_iters_to_third\""
            in text)
