"""SWE-Gym's report: the results tables re-render byte-identical (the expected text is the
output of experiments/swe_gym/train.py:results_table before it moved to lib/swe_gym/report.py)
and the targets follow their stated rules."""
import pytest

from lib.swe_gym import report

RESULTS = {
    "instances": {"total": 12, "train": 8, "test": 4, "train_repos": 2, "test_repos": ["r2"],
                  "by_kind": {"flip_comparison": 7, "off_by_one": 5},
                  "generation": {"rejected": {"duplicate": 1}}},
    "search": {"rate": 0.75, "resolved": 3, "n": 4},
    "lm": {"pretrain_examples": 30},
    "base": {"rate": 0.0, "resolved": 0, "n": 4},
    "warm": {"search_resolved": 5, "instances": 8, "demonstrations": 4, "rate": 0.25,
             "resolved": 1, "n": 4},
    "rounds": [{"round": 1, "sampled": 16, "sample_resolved": 0, "instances_with_success": 0,
                "distinct_patches": 3, "train_trajectories": 0, "train_instances": 0,
                "yield": 0.0, "skipped": "no resolved trajectories to fine-tune on"},
               {"round": 2, "sampled": 16, "sample_resolved": 3, "instances_with_success": 2,
                "distinct_patches": 5, "train_trajectories": 3, "train_instances": 2,
                "yield": 0.1875, "rate": 0.5, "resolved": 2, "n": 4,
                "vs_round0": {"wins": 1, "losses": 0, "p": 0.5}}],
    "expert_iteration": {"instances": 8, "rollouts": 2, "temperature": 1.0, "main_cap": 2,
                         "exported_chat_jsonl": 3},
    "rft": {"cap_1": {"trajectories": 2, "instances": 2, "rate": 0.25, "resolved": 1, "n": 4},
            "cap_none": {"trajectories": 0, "instances": 0, "skipped": "no data"}},
    "verifier": {"train_conversations": 6},
    "scaling": {"policy": "round 2", "instances": 4, "rollouts": 2,
                "curves": {"1": {"pass_mean": 0.5, "pass_std": 0.125, "best_mean": 0.5,
                                 "best_std": 0.125, "pass_exact": 0.5},
                           "2": {"pass_mean": 0.75, "pass_std": 0.0, "best_mean": 0.625,
                                 "best_std": 0.0, "pass_exact": 0.75}},
                "verifier_heldout": {"accuracy": 0.875, "auc": 0.9375}},
    "served": {"model": "m", "rate": 0.25, "resolved": 1, "n": 4},
    "targets": {"rft_gain": {"round0": 0.25, "final": 0.5, "round": 2, "gain": 0.25,
                             "wins": 1, "losses": 0, "p_value": 0.5, "met": False},
                "best_at_k_rises_above_pass1": {"best": [0.5, 0.625], "pass1": 0.5,
                                                "margin": 0.25, "met": False},
                "grader_agrees_with_rerun": {"agree": 8, "checked": 8, "met": True}},
    "grade_cache": {"rollouts": 60, "entries": 11},
    "machine": "x86_64, 2 CPU cores",
    "wall_s": 99.0,
    "stages_total_wall_s": 90.4,
    "stage_wall_s": {"instances": 50.2, "recheck": 40.2},
}

EXPECTED = """\
Benchmark: 12 validated instances from 3 generated repositories (8 train / 4 held-out in 1 repositories); bug kinds {'flip_comparison': 7, 'off_by_one': 5}; generation rejected {'duplicate': 1}.

| policy | training data | held-out resolved | rate [95 % Wilson] |
|---|---|---|---|
| search baseline | — | 3/4 | 0.750 [0.30, 0.95] |
| workspace LM (base) | 30 synthetic repairs | 0/4 | 0.000 [0.00, 0.49] |
| round 0: warm start | base + 4 search-baseline trajectories | 1/4 | 0.250 [0.05, 0.70] |
| round 2: expert iteration | round 0 + 3 own trajectories (2 instances) | 2/4 | 0.500 [0.15, 0.85] |
| RFT cap 1 | round 0 + 2 own trajectories (2 instances) | 1/4 | 0.250 [0.05, 0.70] |
| served m | — | 1/4 | 0.250 [0.05, 0.70] |

Warm start: the search baseline resolved 5/8 training instances; 4 of those trajectories are expressible as fix(line, op) and were used.

Expert iteration on 8 training instances × 2 rollouts per round (T = 1.0, batched sampling); each round fine-tunes round 0 on all own resolved trajectories so far (cap 2 per instance); paired test vs round 0 on the held-out instances (exact one-sided McNemar):

| round | sampled | resolved (yield) | instances solved | distinct patches | trained on | held-out | vs round 0: gained / lost, p |
|---|---|---|---|---|---|---|---|
| 1 | 16 | 0 (0.000) | 0/8 | 3 | 0 | — (no data) | — |
| 2 | 16 | 3 (0.188) | 2/8 | 5 | 3 | 0.500 | 1 / 0, 0.50 |

3 resolved own trajectories exported as chat JSONL.

Pass@K / Best@K (round 2, 4 held-out instances × 2 rollouts; mean ± sd over 100 subsamples):

| K | Pass@K | Best@K (verifier) | Pass@K closed form |
|---|---|---|---|
| 1 | 0.500 ± 0.125 | 0.500 ± 0.125 | 0.500 |
| 2 | 0.750 ± 0.000 | 0.625 ± 0.000 | 0.750 |

Verifier on the held-out rollouts: accuracy 0.875, AUC 0.938 (trained on 6 balanced conversations).

| target | measured | verdict |
|---|---|---|
| fine-tuning on its own resolved trajectories raises the held-out resolve rate (last round vs round 0, one-sided exact McNemar p < 0.05) | round 0 0.250 → round 2 0.500 (1 gained, 0 lost; p = 0.500) | MISSED |
| Best@K rises with K and stays above Pass@1 (by > 2 sd of Pass@1) | Best@K 0.500, 0.625; Pass@1 0.500 | MISSED |
| grader = direct re-run (gold and empty patch, held-out) | 8/8 | MET |

Grading: about 60 graded rollouts in all stages, 11 distinct (instance, patch) pairs graded by pytest (the grade cache on disk; search-baseline verdicts of the earlier run are not in it).

Measured on x86_64, 2 CPU cores (load average not recorded); stages took 90 s in all (instances 50 s, recheck 40 s)."""


def test_render_of_a_fixture_equals_the_table_of_the_code_before_the_move():
    assert report.render(RESULTS) == EXPECTED


def _config(target_gain=0.0):
    import ml_collections
    return ml_collections.ConfigDict({"eval": {"target_gain": target_gain}})


def _curves(best_k2):
    return {1: {"pass_mean": 0.1, "pass_std": 0.02, "best_mean": 0.1},
            2: {"pass_mean": 0.2, "pass_std": 0.01, "best_mean": best_k2},
            4: {"pass_mean": 0.3, "pass_std": 0.0, "best_mean": 0.3}}


ROUNDS = [{"round": 1, "rate": 0.1, "vs_round0": {"wins": 5, "losses": 0, "p": 0.03125}},
          {"round": 2, "skipped": "no resolved trajectories to fine-tune on"}]
ROWS = [["a", "gold", "FULL", "FULL"], ["a", "empty", "NO", "NO"]]


def test_targets_take_the_last_trained_round_and_the_two_sd_margin():
    t = report.targets(_config(), 0.0, ROUNDS, _curves(0.2), ROWS)
    g = t["rft_gain"]
    assert (g["round"], g["final"], g["gain"], g["wins"], g["p_value"], g["met"]) == (
        1, 0.1, 0.1, 5, 0.03125, True)
    b = t["best_at_k_rises_above_pass1"]
    assert b["best"] == [0.1, 0.2, 0.3] and b["margin"] == pytest.approx(0.04) and b["met"]
    assert t["grader_agrees_with_rerun"] == {"agree": 2, "checked": 2, "met": True}
    # Best@2 within 2 sd of Pass@1: still rising, but not above Pass@1 by the margin
    assert not report.targets(_config(), 0.0, ROUNDS, _curves(0.13), ROWS)[
        "best_at_k_rises_above_pass1"]["met"]
    # a gain not above eval.target_gain is missed even when significant
    assert not report.targets(_config(0.1), 0.0, ROUNDS, _curves(0.2), ROWS)["rft_gain"]["met"]


def test_targets_without_a_trained_round_and_with_a_disagreement():
    t = report.targets(_config(), 0.05, ROUNDS[1:], _curves(0.2),
                       ROWS + [["b", "empty", "NO", "FULL"]])
    assert t["rft_gain"] == {"round0": 0.05, "final": None, "round": None, "gain": None,
                             "wins": 0, "losses": 0, "p_value": 1.0, "met": False}
    assert t["grader_agrees_with_rerun"] == {"agree": 2, "checked": 3, "met": False}
