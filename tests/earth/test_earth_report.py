"""EARTH's targets and tables from a hand-written results dict: met / missed / not-run flags,
the margins, and the README block byte for byte."""
from ml_collections import ConfigDict

from lib.common.report import met_of, met_tree, verdict, walk_targets
from lib.earth import report


def _m(rmse):
    return {"rmse": rmse, "mae": rmse / 2, "pcc": 0.5, "peak_mae": rmse * 3, "peak_time": 1.5,
            "peak_value": 0.25}


RESULTS = {"simulated": {"earth": {"test": {"1": _m(2.0), "3": _m(4.0)}},
                         "no_eano": {"test": {"1": _m(2.5), "3": _m(3.5)}},
                         "persistence": {"test": {"1": _m(3.0), "3": _m(5.0)}}},
           "US-States": {"earth": {"test": {"1": _m(1.0), "3": _m(2.0)}},
                         "gru": {"test": {"1": _m(1.5), "3": _m(2.5)}}}}
CONFIG = ConfigDict({"data": {"horizons": (1, 3)}})


def test_targets_flag_baselines_and_ablations_per_dataset():
    t = report.targets(RESULTS, CONFIG)
    sim = t["simulated"]
    assert met_of(sim["beats_all_baselines"]) and not met_of(sim["every_ablation_costs"])  # no_eano h=3
    assert sim["vs"]["no_eano"]["margins"] == {"1": 0.5, "3": -0.5}
    assert t["US-States"]["every_ablation_costs"] is None                    # none run there


def test_render_is_the_readme_block_byte_for_byte():
    out = {"results": RESULTS, "targets": report.targets(RESULTS, CONFIG), "horizons": [1, 3],
           "complete": False, "num_steps": 5, "num_seeds": 2, "machine": "test machine",
           "wall_s": 12.4, "datasets": {"simulated": {"steps": 50, "regions": 3},
                                        "US-States": {"steps": 60, "regions": 4}}}
    head = ("| model | RMSE h=1 | RMSE h=3 | MAE h=1 | MAE h=3 | PCC h=1 | PCC h=3 | "
            "peak-MAE h=1 | peak-MAE h=3 | peak-time err (steps) | peak-value err |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    assert report.render(out, {"tag": "tiny"}) == (
        "**simulated** (test split)\n\n" + head +
        "| earth | **2** | 4 | 1 | 2 | 0.500 | 0.500 | 6 | 12 | 1.5 / 1.5 | 0.25 / 0.25 |\n"
        "| no_eano | 2.5 | **3.5** | 1.25 | 1.75 | 0.500 | 0.500 | 7.5 | 10.5 | 1.5 / 1.5 | "
        "0.25 / 0.25 |\n"
        "| persistence | 3 | 5 | 1.5 | 2.5 | 0.500 | 0.500 | 9 | 15 | 1.5 / 1.5 | 0.25 / 0.25 |"
        "\n\n**US-States** (test split)\n\n" + head +
        "| earth | **1** | **2** | 0.5 | 1 | 0.500 | 0.500 | 3 | 6 | 1.5 / 1.5 | 0.25 / 0.25 |\n"
        "| gru | 1.5 | 2.5 | 0.75 | 1.25 | 0.500 | 0.500 | 4.5 | 7.5 | 1.5 / 1.5 | 0.25 / 0.25 |"
        "\n\nTargets:\n\n| dataset | EARTH beats every baseline in RMSE at every horizon | each "
        "ablation costs accuracy | RMSE margins (other − EARTH; > 0 means EARTH better), per "
        "horizon |\n|---|---|---|---|\n"
        "| simulated | MET | MISSED | persistence: 1/1; no_eano: 0.5/-0.5 |\n"
        "| US-States | MET | — | gru: 0.5/0.5 |\n\nReal benchmark files where EARTH beats every "
        "baseline at every horizon: 1 of 1 run (US-States); target: at least 3 of 4.\n\n"
        "Config `tiny` (5 steps, 2 seed(s) per horizon; run INCOMPLETE: datasets not listed did "
        "not finish); measured on test machine in 12 s. Datasets: simulated (50 × 3), "
        "US-States (60 × 4). Forecast plots: `plots/forecast_<dataset>_h<h>.png` in the workdir.")
    # the config line names EANO's dynamics; a config from before the key ran "sirs"
    for model, word in (({"dynamics": "official"}, "official"), ({}, "sirs")):
        assert f"Config `tiny` (EANO dynamics {word}; 5 steps, 2 seed(s)" in report.render(
            out, {"tag": "tiny", "model": model})


def test_results_markdown_bolds_the_best_rmse_per_dataset_and_horizon():
    text = report.results_markdown(RESULTS, CONFIG)
    assert text.endswith("| US-States | gru | 1.5 | 2.5 | 0.75 | 1.25 | 0.5 | 0.5 | 4.5 | 7.5 |\n")
    assert "| simulated | no_eano | 2.5 | **3.5** |" in text


def _s(rmse):
    return {**_m(rmse), "rmse_std": 0.1}


EPI = {"japan": {"earth": {"test": {"1": _s(2.0), "3": _s(4.0)}},
                 "epignn": {"test": {"1": _s(2.5), "3": _s(3.5)}},
                 "gru": {"test": {"1": _s(3.0), "3": _s(5.0)}}}}


def test_targets_are_records_with_the_margins_behind_them():
    """Per other model a record (EARTH better at every horizon, with the margins); per dataset
    the baselines and ablations targets with the models and the smallest margin (None where
    none ran, not a record); EpiGNN's target with its smallest margin."""
    t = report.targets({**RESULTS, **EPI}, CONFIG)
    assert [(p, verdict(r)) for p, r in walk_targets(t)] == [
        ("simulated.vs.no_eano", "MISSED"), ("simulated.vs.persistence", "MET"),
        ("simulated.beats_all_baselines", "MET"), ("simulated.every_ablation_costs", "MISSED"),
        ("US-States.vs.gru", "MET"), ("US-States.beats_all_baselines", "MET"),
        ("japan.vs.epignn", "MISSED"), ("japan.vs.gru", "MET"),
        ("japan.beats_all_baselines", "MET"), ("japan.at_or_below_epignn", "MISSED")]
    assert t["simulated"]["every_ablation_costs"] == {"models": ["no_eano"], "min_margin": -0.5,
                                                      "met": False}
    assert t["japan"]["at_or_below_epignn"] == {"min_margin": -0.5, "met": False}
    assert t["japan"]["vs"]["epignn"] == {"margins": {"1": 0.5, "3": -0.5}, "met": False}
    assert t["US-States"]["every_ablation_costs"] is None


def _old_form(targets):
    """The targets as results.json stored them before records: bare bools, and each `vs`
    row's verdict under "earth_better_all"."""
    old = met_tree(targets)
    for ds, t in targets.items():
        old[ds]["vs"] = {m: {"margins": r["margins"], "earth_better_all": r["met"]}
                         for m, r in t["vs"].items()}
    return old


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    """The targets table (RESULTS: one real dataset won) and the EpiGNN table (EPI)."""
    base = {"horizons": [1, 3], "complete": True, "num_steps": 5, "num_seeds": 1,
            "machine": "m", "wall_s": 1.0, "datasets": {}}
    texts = {}
    for name, results in (("targets", RESULTS), ("epignn", EPI)):
        new = report.targets(results, CONFIG)
        texts[name] = [report.render({**base, "results": results, "targets": t}, {"tag": "x"})
                       for t in (new, _old_form(new))]
        assert texts[name][0] == texts[name][1]
    assert "every horizon: 1 of 1 run (US-States)" in texts["targets"][0]
    assert "| japan | MISSED | 0.5/-0.5 |" in texts["epignn"][0]
    assert "EARTH vs EpiGNN (EpiGNN's protocol; copies listed h = 1, 3 × seeds)" in texts["epignn"][0]
