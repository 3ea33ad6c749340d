"""EditLord's README block (`report.render`): a fixed results dict renders to fixed markdown,
so a refactor of the report code shows any change of the published tables."""
from lib.editlord import report


def _editor(loss, parsed, correct, fixed, success, resumed, rows, drop_kind):
    clean = {"n": 2, "parsed": parsed, "correct": correct, "fixed": fixed, "success": success, "exact": success}
    pert = {"n": 2, "parsed": 0.5, "correct": 0.0, "fixed": 0.25, "success": 0.0, "exact": 0.0}
    return {"train": {"final_loss": loss, "resumed_from": resumed, "loss_curve": [[1, 2.0], [3, loss]]},
            "eval": {"conditions": {"clean": clean, drop_kind: pert},
                     "failures": {"clean": {"syntax": 1}},
                     "drop": {drop_kind: {"parsed": parsed - 0.5, "correct": correct, "fixed": fixed - 0.25,
                                          "success": success, "exact": success}},
                     "mean_drop": {"parsed": parsed - 0.5, "correct": correct, "fixed": fixed - 0.25,
                                   "success": success, "exact": success},
                     "perturbed": pert, "invented": {"clean": 1, drop_kind: 0},
                     "clean_successes": ["HumanEval/1:len_zero"] if success else [],
                     "clean_rows": rows}}


def results():
    rows_b = [{"id": "a", "correct": True, "fixed": 1.0, "success": True},
              {"id": "b", "correct": False, "fixed": 0.0, "success": False}]
    rows_s = [{"id": "a", "correct": True, "fixed": 1.0, "success": True},
              {"id": "b", "correct": True, "fixed": 0.5, "success": False}]
    sr = _editor(0.25, 1.0, 1.0, 0.75, 0.5, 3, rows_s, "dead_code")
    sr["eval"]["rule_prediction"] = {"precision": 0.5, "recall": 1 / 3, "generated": 4, "gold": 6}
    return {
        "tag": "fixture",
        "data": {"pairs": 10, "train_pairs": 8, "train_problems": 4, "test_pairs": 2,
                 "test_problems": 1, "near_dup_threshold": 0.8,
                 "near_dup_clusters": [["HumanEval/56", "HumanEval/61"]]},
        "corpus": {"pairs": 6, "functions": 40, "skipped": {"near_dup_of_held_out": 1},
                   "samples": 5, "mean_rules_per_sample": 0.4,
                   "rule_counts": {"none_compare": 4, "len_zero": 2}},
        "rules": {"num_raw": 9, "num_rules": 3, "iterations": 2, "converged": True,
                  "pruned": 4, "added": 5, "merged": 1,
                  "recovery": {"precision": 1.0, "recall": 0.5, "num_learned": 3,
                               "num_eligible": 2, "missed": ["sum_loop"],
                               "coverage": {"len_zero": 1.0, "sum_loop": 0.0}}},
        "perturbations": {"kept": {"dead_code": 2}},
        "editors": {"base": _editor(0.5, 0.5, 0.5, 0.5, 0.5, None, rows_b, "dead_code"),
                    "spec_rules": sr},
        "abstract_identifiers": True,
        "served": {"prompting": {"correct": 0.5, "fixed": 1.0, "success": 0.5},
                   "iterative": {"correct": 1.0, "fixed": 1.0, "success": 1.0}},
        "stage_s": {"pairs": 6.0, "editor_base": 90.0, "editor_spec_rules": 120.0},
        "wall_s": 300.0, "machine": "x86_64, 2 CPU cores",
    }


CONFIG = {"tag": "fixture", "editor": {"target_format": "edit_script"}}


# the README block of `tools/results.py --paper=editlord`
EXPECTED = (
    'Pairs: 10 (8 train from 4 problems, 2 held-out from 1 problems).\n'
    '\n'
    'Split by clusters of near-duplicate problems (shape-token similarity ≥ 0.8; each cluster on one side): 1 clusters of 2+ problems (HumanEval/56 ~ HumanEval/61).\n'
    '\n'
    'Standard-library corpus (training only, no tests): 6 pairs from 40 functions of ≤ max_chars characters (1 near-duplicates of held-out units left out); 5 editor samples, 0.4 manifested rules per sample; injected rules: none_compare 4, len_zero 2.\n'
    '\n'
    'Rule learning: 9 extracted rules -> 3 meta-rules in 2 Algorithm-1 rounds (converged: yes; pruned 4, added 5, merged 1).\n'
    '\n'
    '| rule recovery | value |\n'
    '|---|---|\n'
    '| precision (learned rules firing ≥ 80 % where one injected rule was) | 1 |\n'
    '| recall (injected rules covered ≥ 50 %) | 0.5 |\n'
    '| learned rules / eligible injected rules | 3 / 2 |\n'
    '| missed | sum_loop |\n'
    '\n'
    '| editor variant | train loss | parses | tests pass | anti-patterns removed | pass and all removed | exact | perturbed: pass and all removed | mean drop (success) | mean drop (removed) |\n'
    '|---|---|---|---|---|---|---|---|---|---|\n'
    '| base | 0.5 | 0.5 | 0.5 | 0.5 | 0.5 | 0.5 | 0 | 0.5 | 0.25 |\n'
    '| spec_rules | 0.25 | 1 | 1 | 0.75 | 0.5 | 0.5 | 0 | 0.5 | 0.5 |\n'
    '\n'
    'Editor target format: `edit_script`. Clean held-out replies without a candidate, by reason (counted as failures, never repaired):\n'
    '\n'
    '| editor variant | failures by reason |\n'
    '|---|---|\n'
    '| base | syntax 1 |\n'
    '| spec_rules | syntax 1 |\n'
    '\n'
    '| editor variant | perturbation | inputs | success, clean | success, perturbed | drop (success) | drop (removed) | drop (tests pass) |\n'
    '|---|---|---|---|---|---|---|---|\n'
    '| base | dead_code | 2 | 0.5 | 0 | 0.5 | 0.25 | 0.5 |\n'
    '| spec_rules | dead_code | 2 | 0.5 | 0 | 0.5 | 0.5 | 1 |\n'
    '\n'
    "Identifier abstraction on (`editor.abstract_identifiers`): the editors saw and wrote f0 / v0 placeholders, mapped back before scoring; placeholder names not in the input's map (kept as written), clean held-out: base 1, spec_rules 1.\n"
    '\n'
    '| editor variant | clean held-out successes (pair ids) |\n'
    '|---|---|\n'
    '| base | HumanEval/1:len_zero |\n'
    '| spec_rules | HumanEval/1:len_zero |\n'
    '\n'
    '| editor variant | generated rule lines | manifested rules | rule precision | rule recall |\n'
    '|---|---|---|---|---|\n'
    '| spec_rules | 4 | 6 | 0.5 | 0.333 |\n'
    '\n'
    '| served mode | tests pass | anti-patterns removed | pass and all removed |\n'
    '|---|---|---|---|\n'
    '| prompting | 0.5 | 1 | 0.5 |\n'
    '| iterative | 1 | 1 | 1 |\n'
    '\n'
    '| target | met | measured |\n'
    '|---|---|---|\n'
    '| rule_recovery | MISSED | precision 1.00, recall 0.50 (>= 0.8 each) |\n'
    '| rules_beat_base | MISSED | +spec+rules vs base, clean held-out: anti-patterns removed 0.750 vs 0.500, tests pass 1.000 vs 0.500; pairs only one passes: 1 vs 0, one-sided sign test p = 0.5 (needs <= 0.05) |\n'
    '| robustness | MISSED | mean drop under perturbation, +spec+rules vs base: success +0.500 vs +0.500, anti-patterns removed +0.500 vs +0.250 (smaller drop = advantage grows; needs an advantage on clean inputs: success 0.500 vs 0.500) |\n'
    '\n'
    'Config `fixture`; measured on x86_64, 2 CPU cores (load average not recorded); the last invocation took 5.0 min (stages, min: pairs 0.1, editor_base 1.5, editor_spec_rules 2.0; this invocation resumed spec_rules from step 3 (trained editors and cached replies are reused, so its time excludes their training)).')


def test_render_of_a_fixed_results_dict_is_unchanged():
    assert report.render(results(), CONFIG) == EXPECTED


def test_render_fills_in_what_older_results_lack():
    r = results()
    text = report.render(r, {"tag": "old", "editor": {}})
    assert r["editor_format"] == "code" and "Editor target format: `code`." in text
    assert set(r["targets"]) == {"rule_recovery", "rules_beat_base", "robustness"}
