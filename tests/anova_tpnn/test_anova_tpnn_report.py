"""Targets and tables from a hand-written results dict (met and missed cases)."""
import json

import pytest

from lib.anova_tpnn import report


def _model(metric, stab, rec=None):
    out = {"metric": metric, "metric_se": 0.01, "stability": stab, "stability_centred": stab}
    if rec is not None:
        out.update(recovery=rec, recovery_centred=rec)
    return out


def _results():
    return {"datasets": {
        "synth_reg": {"task": "regression", "n_train": 10, "n_val": 2, "n_test": 3,
                      "num_features": 8,
                      "num_components": 36, "modes": {
                          "seed": {"tpnn": _model(0.52, 0.1, 0.2), "nam": _model(0.60, 0.3, 0.9),
                                   "nbm": _model(0.50, 0.25, 0.3), "mlp": _model(0.7, None)},
                          "resample": {"tpnn": _model(0.5, 0.2), "nam": _model(0.6, 0.3),
                                       "nbm": _model(0.5, 0.5)}}},
        "breast_cancer": {"task": "classification", "n_train": 10, "n_val": 2, "n_test": 3,
                          "num_features": 10,
                          "num_components": 55, "modes": {
                              "seed": {"tpnn": _model(0.90, 0.1), "nam": _model(0.99, 0.5),
                                       "nbm": _model(0.98, 0.4)}}}}}


def test_targets_compute_ratios_gaps_and_met_flags():
    t = report.targets(_results())
    seed = t["stability"]["per_set"]["synth_reg/seed"]
    assert seed["ratios"] == pytest.approx({"nam": 3.0, "nbm": 2.5}) and seed["met"]
    assert not t["stability"]["per_set"]["synth_reg/resample"]["met"]       # nam 1.5×
    assert not t["stability"]["all_met"]
    assert t["recovery"]["per_set"]["synth_reg"]["met"] and t["recovery"]["all_met"]
    pred = t["prediction"]["per_set"]
    assert pred["synth_reg"]["best"] == "nbm"
    assert pred["synth_reg"]["gap"] == pytest.approx(0.04) and pred["synth_reg"]["met"]
    assert pred["breast_cancer"]["best"] == "nam"                           # AUROC: max
    assert pred["breast_cancer"]["gap"] == pytest.approx(0.09 / 0.99)
    assert not pred["breast_cancer"]["met"] and not t["prediction"]["all_met"]
    json.dumps(t)                                                           # serialisable
    # the EBM is a baseline for prediction, not a stability/recovery reference
    results = _results()
    results["datasets"]["synth_reg"]["modes"]["seed"]["ebm"] = _model(0.40, 0.9, 5.0)
    t = report.targets(results)
    assert t["prediction"]["per_set"]["synth_reg"]["best"] == "ebm"
    assert not t["prediction"]["per_set"]["synth_reg"]["met"]               # +30%
    assert set(t["stability"]["per_set"]["synth_reg/seed"]["ratios"]) == {"nam", "nbm"}
    assert set(t["recovery"]["per_set"]["synth_reg"]) == {"tpnn", "nam", "nbm", "met"}


def test_tables_state_met_and_missed():
    results = _results()
    results["targets"] = report.targets(results)
    text = report.tables(results)
    assert "| stability ≥ 2× NAM and NBM (raw components) | MISSED |" in text
    assert "| recovery error < NAM and NBM | MET |" in text
    assert "gap +4.0% vs nbm (met)" in text
    assert "| mlp | 0.7000 ± 0.0100 | — |" in text
    assert "n_train = 10, n_val = 2, n_test = 3" in text
    assert "main effects only" not in text          # secondary rows only when measured


def _config(tag="quick"):
    return {"tag": tag, "datasets": ["synth_reg"], "models": ["tpnn"], "seed": 0,
            "replicas": {"num": 3, "modes": ["seed"]}, "ebm": {"enabled": False, "num_replicas": 2},
            "eval": {"val_every": 50}, "data": {"val_fraction": 0.1}}


def _run(names, wall):
    full = _results()
    return {"datasets": {n: full["datasets"][n] for n in names}, "wall_s": wall,
            "machine": "test machine", "complete": True}


def test_render_of_one_run_is_the_tables_and_the_run_line():
    results = dict(_run(["synth_reg", "breast_cancer"], 125.0), complete=False)
    expected_tables = report.tables(dict(results, targets=report.targets(results)))
    assert report.render(results, _config()) == (
        "**Partial run**: the workdir's results.json says data sets of the config are still to "
        "come; only the data sets in the tables below were run.\n\n" + expected_tables +
        "\n\nConfig `quick` (EBM off; each replica's params selected at its best validation "
        "loss, checked every 50 steps); measured on test machine (load average not recorded); "
        "wall time per process 2 min (1 process).")


def test_merging_two_workdirs_equals_the_run_of_both_and_refuses_conflicts():
    whole = report.targets(_results())
    more = ("w2", _run(["breast_cancer"], 300.0), _config())
    merged, _ = report.merge([("w1", _run(["synth_reg"], 60.0), _config()), more])
    assert merged["targets"] == whole and merged["wall_s_per_workdir"] == [60.0, 300.0]
    assert report.render(_run(["synth_reg"], 60.0), _config(), (more,)).endswith(
        "wall time per process 1, 5 min (2 processes).")
    with pytest.raises(ValueError, match="w2: config differs"):
        report.merge([("w1", _run(["synth_reg"], 1.0), _config()),
                      ("w2", _run(["breast_cancer"], 1.0), {**_config(), "seed": 1})])
    clash = _run(["synth_reg"], 1.0)
    clash["datasets"]["synth_reg"]["modes"]["seed"]["tpnn"] = _model(0.1, 0.1)
    with pytest.raises(ValueError, match="synth_reg/seed/tpnn differs between workdirs"):
        report.merge([("w1", _run(["synth_reg"], 1.0), _config()), ("w2", clash, _config())])


def test_purified_scores_are_judged_and_tabled_first_with_raw_as_secondary():
    results = _results()
    seed = results["datasets"]["synth_reg"]["modes"]["seed"]
    # raw: tpnn far ahead; purified on the signal components: NA²M close (1.2×) and better on
    # recovery; purified unit-RMS over all components (secondary): tpnn 4× ahead of both
    for name, sig, uni, rec in (("tpnn", 0.10, 0.05, 0.20), ("nam", 0.12, 0.20, 0.15),
                                ("nbm", 0.30, 0.20, 0.40)):
        seed[name].update(stability_purified_signal=sig, stability_purified=uni,
                          stability_purified_mains=uni, recovery_purified=rec,
                          recovery_purified_se=0.01)
    t = report.targets(results)
    assert t["stability"]["per_set"]["synth_reg/seed"]["met"]               # raw 3×, 2.5×
    judged = t["stability_purified_signal"]["per_set"]["synth_reg/seed"]
    assert judged["ratios"] == pytest.approx({"nam": 1.2, "nbm": 3.0})
    assert not judged["met"] and not t["stability_purified_signal"]["all_met"]
    assert t["stability_purified"]["per_set"]["synth_reg/seed"]["met"]      # 4×, 4×
    assert not t["recovery_purified"]["per_set"]["synth_reg"]["met"]        # nam 0.15 < 0.20
    assert t["recovery"]["per_set"]["synth_reg"]["met"]                     # raw: tpnn wins
    text = report.tables({**results, "targets": t})
    assert ("| model | test RMSE ↓ (± SE) | purified var / true var, signal components, seeds ↓ "
            "| same, resamples ↓ | purified unit-RMS, all components, seeds ↓ |") in text
    assert ("| nam | 0.6000 ± 0.0100 | 0.1200 | — | 0.2000 | — | 0.2000 | 0.150 ± 0.010 "
            "| 0.3000 |") in text
    assert ("| **stability ≥ 2× NAM and NBM, purified components, variance / true variance on "
            "the signal components (judged)** | MISSED | synth_reg/seed: nam 1.2×, nbm 3.0× "
            "(missed) |") in text
    assert ("| same, purified, unit-RMS score averaged over all components (secondary) | MET | "
            "synth_reg/seed: nam 4.0×, nbm 4.0× (met) |") in text
    assert "| stability ≥ 2× NAM and NBM (raw components) | MISSED |" in text
    # a set without known components has no signal score: no judged row for it, no crash
    for name in ("tpnn", "nam", "nbm"):
        seed[name]["stability_purified_signal"] = None
    t = report.targets(results)
    assert "stability_purified_signal" not in t and t["stability_purified"]["all_met"]
