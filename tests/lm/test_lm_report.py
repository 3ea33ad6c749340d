"""The lm target record (lib/lm/report.targets) and the README block from results stored with
and without it."""
from lib.common.report import verdict, walk_targets
from lib.lm import report

RESULTS = {"num_params": 1000, "step": 20, "train_wall_s": 3.0, "final_loss": 0.5,
           "model": {"num_layers": 1, "d_model": 8, "num_heads": 2},
           "eval": {"exact_match": 0.96, "num_correct": 24, "num_eval": 25,
                    "target_exact_match": 0.95, "target_met": True, "wrong_examples": []},
           "machine": "x86_64, 2 CPU cores", "wall_s": 4.0}
CONFIG = {"tag": "tiny", "task": {"digits": 2, "num_train": 100}, "train": {"batch_size": 8}}


def _with_eval(**changes):
    return {**RESULTS, "eval": {**RESULTS["eval"], **changes}}


def test_targets_is_one_record_with_the_exact_match_and_its_threshold():
    met = report.targets(RESULTS)
    missed = report.targets(_with_eval(exact_match=0.5, num_correct=12, target_met=False))
    assert [(p, verdict(r)) for p, r in walk_targets(met)] == [("held_out_exact_match", "MET")]
    assert [(p, verdict(r)) for p, r in walk_targets(missed)] == [
        ("held_out_exact_match", "MISSED")]
    assert missed["held_out_exact_match"] == {"exact_match": 0.5, "threshold": 0.95, "met": False}


def test_render_is_the_same_with_and_without_the_target_record():
    """A run stored before the record (eval's target_met only) renders as a new one."""
    for results in (RESULTS, _with_eval(exact_match=0.5, num_correct=12, target_met=False)):
        text = report.render(results, CONFIG)
        assert report.render({**results, "targets": report.targets(results)}, CONFIG) == text
        assert f"| target | ≥ 0.95: {verdict(results['eval']['target_met'])} |" in text
