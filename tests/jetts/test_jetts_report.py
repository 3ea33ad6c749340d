"""lib/jetts/report.py: the three targets read off a small results dict, and their
markdown rendered byte for byte."""
from lib.jetts import report

ROW = {"top1": 100.0, "greedy": 40.0, "judge_accuracy": 1.0, "judge_accuracy_ci": [1, 1],
       "minus_greedy_ci": [60.0, 60.0]}
ARITH = {
    "beam": {"PRM/score": {"top1": 50.0}, "ORM/score": {"top1": 40.0},
             "ORM/score+lookahead": {"top1": 90.0}, "judge-lm:compact/likert": {"top1": 30.0},
             "sim-acc0.9/likert": {"top1": 95.0}},
    "rerank": {"oracle/score": ROW,
               "a/likert": {"judge_accuracy": 0.8, "judge_accuracy_ci": [0.7, 0.9],
                            "top1": 50.0, "greedy": 40.0, "minus_greedy_ci": [2.0, 18.0]},
               "b/likert": {"judge_accuracy": 0.45, "judge_accuracy_ci": [0.3, 0.6],
                            "top1": 30.0, "greedy": 40.0, "minus_greedy_ci": [-20.0, 1.0]}},
    "position_study": {"one_order": {"slope": -0.3, "slope_ci": [-0.35, -0.25]},
                       "both_orders": {"slope": 0.01, "slope_ci": [-0.02, 0.04]}}}

EXPECTED = """
Targets:

* PRM beats ORM and prompted judges in beam search: PRM 50.0 vs ORM/score 40.0, judge-lm:compact/likert 30.0: **MET**
* reranking with every better-than-chance judge beats greedy (1 judge/method pairs with pair accuracy > 0.5): **MET**
* simulated position bias cancelled by both-order round robin (slope -0.300 with one order, 0.010 with both): **MET**

Reranking against greedy with CIs (pair accuracy: query bootstrap; top-1 − greedy: paired bootstrap; chance / vs greedy read off the 95 % CIs):

| judge / method | pair acc. | 95 % CI | chance | top-1 − greedy | 95 % CI | vs greedy |
|---|---|---|---|---|---|---|
| a/likert | 0.800 | [0.70, 0.90] | above | +10.0 | [2.00, 18.00] | better |
| b/likert | 0.450 | [0.30, 0.60] | at | -10.0 | [-20.00, 1.00] | tie |

Of the 1 judge/method pairs whose pair-accuracy CI lies above 0.5, 1 beat greedy (CI of the difference above 0), 0 are indistinguishable from it and 0 are worse.

Measured on m in 3 s."""


def test_targets_exclude_lookahead_and_simulated_rivals_and_render_exactly():
    t = report.targets({"domains": {"arithmetic": ARITH}})
    prm = t["prm_beats_orm_and_judges_in_beam"]
    assert prm["rivals"] == {"ORM/score": 40.0, "judge-lm:compact/likert": 30.0} and prm["met"]
    better = t["better_than_chance_rerank_beats_greedy"]
    assert set(better["judges"]) == {"a/likert"} and better["met"]
    assert t["position_bias_cancelled"]["met"]
    assert report.results_markdown({"domains": {}, "targets": t, "wall_s": 3.0,
                                    "machine": "m"}) == EXPECTED
    # a both-order slope CI away from 0 is not cancelled; no arithmetic, no targets
    ps = {**ARITH["position_study"], "both_orders": {"slope": 0.1, "slope_ci": [0.05, 0.2]}}
    assert not report.targets({"domains": {"arithmetic": {**ARITH, "position_study": ps}}})[
        "position_bias_cancelled"]["met"]
    assert report.targets({"domains": {"instructions": {}}}) == {}


def test_the_beam_target_line_says_whether_the_intervals_overlap():
    beam = {"PRM/score": {"top1": 46.7, "top1_ci": [30.0, 66.7]},
            "ORM/score": {"top1": 23.3, "top1_ci": [10.0, 40.0]},
            "judge-lm:compact/likert": {"top1": 20.0, "top1_ci": [6.7, 25.0]}}
    t = report.targets({"domains": {"arithmetic": {**ARITH, "beam": beam}}})
    v = t["prm_beats_orm_and_judges_in_beam"]
    assert v["met"] and v["overlapping"] == ["ORM/score"] and v["significant"] is False
    text = report.results_markdown({"domains": {}, "targets": t, "wall_s": 3.0, "machine": "m"})
    assert ("* PRM beats ORM and prompted judges in beam search: PRM 46.7 [30.00, 66.70] vs "
            "ORM/score 23.3 [10.00, 40.00], judge-lm:compact/likert 20.0 [6.70, 25.00]: **MET** "
            "on point estimates only: the 95 % intervals overlap (ORM/score), not "
            "significant\n") in text
    beam["ORM/score"]["top1_ci"] = [10.0, 29.0]
    t = report.targets({"domains": {"arithmetic": {**ARITH, "beam": beam}}})
    text = report.results_markdown({"domains": {}, "targets": t, "wall_s": 3.0, "machine": "m"})
    assert "**MET**, every rival's 95 % interval below the PRM's\n" in text
    assert t["prm_beats_orm_and_judges_in_beam"]["significant"] is True


def test_publish_adds_significance_to_a_stored_beam_record_and_nothing_else():
    stored = {"prm": 46.7, "overlapping": ["ORM/score"], "met": True}
    results = {"tag": "x", "targets": {"prm_beats_orm_and_judges_in_beam": stored,
                                       "position_bias_cancelled": {"met": False}}}
    out = report.publish_results(results, {}, "w")
    rec = out["targets"]["prm_beats_orm_and_judges_in_beam"]
    assert rec == {"prm": 46.7, "overlapping": ["ORM/score"], "significant": False, "met": True}
    assert list(rec)[-1] == "met" and out["targets"]["position_bias_cancelled"] == {"met": False}
    assert "significant" not in stored and out["tag"] == "x"
    # a record that has it, or a run without CIs, is published as stored
    assert report.publish_results(out, {}, "w") is out
    no_ci = {"targets": {"prm_beats_orm_and_judges_in_beam": {"prm": 1.0, "met": True}}}
    assert report.publish_results(no_ci, {}, "w") is no_ci

