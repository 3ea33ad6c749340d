"""The risk-IRL experiment end to end on the tiny config (with a fixture of the participants'
file format), the per-part reuse on rerun, config errors before any compute, the report."""
import json
import os

import pytest

from experiments.risk_irl import train
from lib.common import config as config_lib
from lib.common.config import ConfigError
from lib.common.report import met_tree
from lib.risk_irl import report
from tests import experiment_runs

CONFIG = "configs/risk_irl/risk_irl.py:tiny"
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "participants_fixture")
WITH_PEOPLE = {"parts": ("participants", "investment", "random", "multi_env"), "grid.n": 100,
               "participants.data_dir": FIXTURE, "participants.participant": 2}


def _config(overrides=None):
    return config_lib.apply_overrides(config_lib.load_config(CONFIG), overrides or {})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return experiment_runs.tiny_run(tmp_path_factory, train, _config(WITH_PEOPLE))


def test_tiny_run_writes_results_tables_and_plots(tiny_run):
    workdir, results = tiny_run
    on_disk = json.load(open(os.path.join(workdir, "results.json")))
    assert on_disk["targets"] == json.loads(json.dumps(results["targets"]))
    p = on_disk["participants"]
    assert p["num_participants"] == 3 and p["non_markovian_groups"] == [0, 0, 6]
    assert len(p["sgd"]["curve"][0][0]) == 3                     # t = 0, 5, 10
    inv = on_disk["investment"]["experts"]["sqrt"]
    assert set(inv["caty"]) >= {"linear", "sqrt", "square"}
    assert abs(inv["caty"]["sqrt"]["absolute"]) <= inv["caty"]["sqrt"]["threshold"]
    assert on_disk["random"]["sizes"]["4"]["num_actions"] == 3
    sets = on_disk["multi_env"]["set"]
    for lo, hi in zip(sets["1"]["by_tolerance"], sets["3"]["by_tolerance"]):
        assert hi["fraction"] <= lo["fraction"]                  # nested sets of environments
    assert sets["1"]["true_max_c"] < 1e-5                        # the true utility is compatible
    text = open(os.path.join(workdir, "results.md")).read()
    assert "Non-Markovian behaviour: **1 of 3**" in text and "### Random MDPs" in text
    for name in ("participant_noncompatibility.png", "investment_sqrt_utilities.png",
                 "random_noncompatibility.png", "multi_env_utilities.png"):
        assert os.path.getsize(os.path.join(workdir, "plots", name)) > 5000
    assert report.tables(on_disk) == text.rstrip("\n")


def test_rerun_reuses_finished_parts(tiny_run, monkeypatch):
    workdir, results = tiny_run
    monkeypatch.setattr(train, "RUNNERS", {k: None for k in train.RUNNERS})   # would fail if called
    again = train.train_and_evaluate(_config(WITH_PEOPLE), workdir)
    assert again["targets"] == results["targets"]


def test_a_workdir_of_another_config_is_refused(tiny_run):
    workdir, _ = tiny_run
    with pytest.raises(ValueError, match="different config"):
        train.train_and_evaluate(_config({**WITH_PEOPLE, "random.step_size": 7.0}), workdir)


@pytest.mark.parametrize("overrides,message", [
    ({"parts": ("participants",)}, r"'participants.data_dir' = '' is not allowed"),
    ({**WITH_PEOPLE, "grid.n": 20}, r"'grid.n' = 20 is not allowed; the participants"),
    ({"tractor.eval_every": 3}, r"'tractor.eval_every' = 3 is not allowed; it must divide"),
    ({"random.init": "convex_concave"}, r"'random.init' = 'convex_concave' is not allowed"),
    ({"random.num_seeds": (1, 2)}, r"one entry per MDP size"),
    ({"investment.step_sizes": (1.0, -2.0)}, r"'investment.step_sizes' = \(1.0, -2.0\)"),
    ({"investment.target_step_size": 3.0}, r"expected one of investment.step_sizes"),
    ({"investment.experts": ("sqrt", "cubic")}, r"'investment.experts' = \('sqrt', 'cubic'\)"),
    ({"tractor.lipschitz": 0.5}, r"'tractor.lipschitz' = 0.5 is not allowed"),
    ({"tractor.method": "dp"}, r"'tractor.method' = 'dp' is not allowed"),
])
def test_bad_configs_are_named_before_any_compute(tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message):
        train.train_and_evaluate(_config(overrides), str(tmp_path / "never"))
    assert not os.path.exists(tmp_path / "never")


def test_missing_participant_data_is_named_before_any_compute(tmp_path):
    with pytest.raises(FileNotFoundError, match="participants.data_dir"):
        train.train_and_evaluate(_config({**WITH_PEOPLE, "participants.data_dir": str(tmp_path)}),
                                 str(tmp_path / "never"))
    assert not os.path.exists(tmp_path / "never")


def test_render_is_the_tables_the_targets_and_the_run_line(tiny_run):
    workdir, _ = tiny_run
    results, config = (json.load(open(os.path.join(workdir, f))) for f in ("results.json", "config.json"))
    text = report.render(results, config)
    assert text.startswith(open(os.path.join(workdir, "results.md")).read().rstrip("\n")
                           + f"\n\nTargets: `{json.dumps(met_tree(results['targets']))}`\n\n")
    assert f"Config `{config['tag']}`; measured on {results['machine']}; parts took " in text
