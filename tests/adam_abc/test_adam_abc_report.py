"""The verdict lines of the adam_abc README block, from a small targets fixture; the target
records of a small results dict, and the same lines from records and from old bare bools."""
from lib.adam_abc import report
from lib.common.report import met_tree, verdict, walk_targets

TARGETS = {"rate": {"slopes": {"quadratic-gaussian/adam": {"avg": True, "min": False},
                               "quadratic-gaussian/sgd": {"avg": True, "min": True}},
                    "eps_independent": {"avg": True}},
           "asymptotic": {"controls_fail": {"const_alpha": True, "const_beta2": False}}}


def test_verdicts_count_every_check_of_each_group():
    """Nested per-statistic checks count one each; groups keep their order."""
    assert report.verdicts({"targets": TARGETS}) == [
        "rate.slopes: 3/4 met", "rate.eps_independent: 1/1 met",
        "asymptotic.controls_fail: 1/2 met"]


def test_render_is_the_tables_then_the_verdicts():
    """No part ran: no tables, then the verdict lines (the config is not read)."""
    assert report.render({"targets": TARGETS}, None) == (
        "\n\nrate.slopes: 3/4 met\nrate.eps_independent: 1/1 met\nasymptotic.controls_fail: 1/2 met")


RESULTS = {"rate": {"theory_slope": -0.5, "tolerance": 0.1, "runs": {
               "q-g/adam": {"slope_avg": -0.52, "slope_min": -0.3},
               "q-g/sgd": {"slope_avg": -0.49, "slope_min": -0.45},
               "q-g/adam_const_alpha": {"slope_avg": -0.05, "slope_min": 0.0}}},
           "asymptotic": {"min_decay": 0.1, "runs": {
               "q-g/adam": {"late_slope": -0.3}, "q-g/adam_const_beta2": {"late_slope": -0.3}}}}


def test_targets_are_records_with_the_slopes_behind_them():
    """Every check is a record (tools/targets.py lists it by its dotted path), met and
    missed ones alike; the tables' bare-bool verdicts are the same checks."""
    t = report.targets(RESULTS)
    walked = [(path, verdict(r)) for path, r in walk_targets(t)]
    assert walked == [
        ("rate.slope_within_tolerance.q-g/adam.avg", "MET"),
        ("rate.slope_within_tolerance.q-g/adam.min", "MISSED"),       # |-0.3 + 0.5| > 0.1
        ("rate.slope_within_tolerance.q-g/sgd.avg", "MET"),
        ("rate.slope_within_tolerance.q-g/sgd.min", "MET"),
        ("rate.adam_matches_sgd.q-g.avg", "MET"),
        ("rate.adam_matches_sgd.q-g.min", "MISSED"),
        ("rate.control_shows_failure.q-g/adam_const_alpha", "MET"),
        ("asymptotic.theory_runs_converge.q-g/adam", "MET"),
        ("asymptotic.control_shows_failure.q-g/adam_const_beta2", "MISSED")]   # it decays
    assert t["rate"]["adam_matches_sgd"]["q-g"]["min"] == {
        "adam": -0.3, "sgd": -0.45, "tolerance": 0.1, "met": False}
    assert met_tree(t["rate"]) == report.rate_targets(RESULTS["rate"])
    assert met_tree(t["asymptotic"]) == report.asymptotic_targets(RESULTS["asymptotic"])


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    new = report.targets(RESULTS)
    old = met_tree(new)                                # the form results.json held before
    assert report.verdicts({"targets": new}) == [
        "rate.slope_within_tolerance: 3/4 met", "rate.adam_matches_sgd: 1/2 met",
        "rate.eps_does_not_matter: 0/0 met", "rate.control_shows_failure: 1/1 met",
        "asymptotic.theory_runs_converge: 1/1 met", "asymptotic.control_shows_failure: 0/1 met"]
    assert report.render({"targets": new}, None) == report.render({"targets": old}, None)
