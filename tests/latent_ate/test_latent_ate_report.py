"""The results tool's pieces in lib/latent_ate/report.py: target rows, the DoubleML agreement
block, merging the workdirs of several settings."""
import pytest

from lib.latent_ate import report


def test_target_lines_state_met_and_missed_with_their_numbers():
    text = report.target_lines({"label/naive/visibly_biased": {"met": True, "bias": -0.68634,
                                                               "reps": 200},
                                "label/dml/coverage": {"met": False, "value": 0.74}})
    assert text == ("| target | status | numbers |\n|---|---|---|\n"
                    "| label/naive/visibly_biased | MET | bias -0.6863, reps 200 |\n"
                    "| label/dml/coverage | MISSED | value 0.74 |")


def test_doubleml_block_judges_the_worst_difference_against_the_tolerance():
    row = {"case": "plr_po_ols", "n_rep": 1, "theta_ours": 2.038427951, "theta_doubleml": 2.0384279,
           "rel_theta": 2.5e-8, "se_ours": 0.078761981, "se_doubleml": 0.07876198,
           "rel_se": 1.3e-15}
    text = report.doubleml_lines({"worst": 2.5e-8, "tol": 1e-6, "rows": [row]})
    assert text == (
        "**Agreement with DoubleML** (same folds, same linear learners, float64): largest "
        "relative difference 2.5e-08 (target 1e-06: MET)\n\n"
        "| case | n_rep | θ̂ ours | θ̂ DoubleML | rel. diff | se ours | se DoubleML | rel. diff |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| plr_po_ols | 1 | 2.03842795 | 2.03842790 | 2.5e-08 | 0.07876198 | 0.07876198 | 1.3e-15 |")
    assert "(target 1e-09: MISSED)" in report.doubleml_lines({"worst": 2.5e-8, "tol": 1e-9,
                                                              "rows": [row]})


def test_merge_joins_settings_and_wall_times_and_refuses_overlaps():
    a = {"settings": {"label": 1}, "targets": {"label/x": {"met": True}}, "wall_s": 10.0}
    b = {"settings": {"complex": 2}, "targets": {"complex/x": {"met": False}}, "wall_s": 5.0}
    merged = report.merge([a, b])
    assert merged["settings"] == {"label": 1, "complex": 2} and merged["wall_s"] == [10.0, 5.0]
    assert set(merged["targets"]) == {"label/x", "complex/x"}
    with pytest.raises(ValueError, match=r"settings \['label'\] appear in more than one"):
        report.merge([{"settings": {"label": 1}, "targets": {}, "wall_s": 1.0},
                      {"settings": {"label": 3}, "targets": {}, "wall_s": 1.0}])


def test_clopper_pearson_closed_forms_and_the_binomial_verdict():
    """k = n: the lower end is (α/2)^(1/n); k = 0: the upper end is 1 − (α/2)^(1/n); the
    verdict says whether the nominal 95 % lies inside the observed coverage's interval."""
    lo, hi = report.clopper_pearson(30, 30)
    assert lo == pytest.approx(0.025 ** (1 / 30)) and hi == 1.0
    lo, hi = report.clopper_pearson(0, 30)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 30))
    res = {"settings": {"complex": {"estimators": {
        "a": {"coverage": 0.9, "reps": 30}, "b": {"coverage": 0.6, "reps": 30},
        "c": {"coverage": None, "reps": 30}}}}}
    text = report.binomial_lines(res, ("a", "b", "c"))
    assert "| complex | a | 27 / 30 |" in text and text.count("| yes |") == 1
    assert "| complex | b | 18 / 30 |" in text and text.count("| NO |") == 1
    assert "| c |" not in text
