"""lib/common/report.py's target record (target, walk_targets, verdict, met_of, met_tree) and
tools/targets.py."""
import json
import os
import subprocess
import sys

import numpy as np

from lib.common import report, workdir as wd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_target_is_the_measured_numbers_and_a_bool_met_last():
    t = report.target(np.float64(0.3) > 0.2, gap=np.float32(0.5), n=np.int64(3),
                      per={"a": np.array([1.0, 2.0]), "b": (np.bool_(True), 2)}, name="x")
    assert list(t) == ["gap", "n", "per", "name", "met"]
    assert t["met"] is True and type(t["met"]) is bool
    assert type(t["gap"]) is float and t["gap"] == 0.5
    assert type(t["n"]) is int and t["n"] == 3
    assert t["per"] == {"a": [1.0, 2.0], "b": (True, 2)} and type(t["per"]["b"][0]) is bool
    assert report.target(0)["met"] is False and report.target([1])["met"] is True
    assert report.target(None, value=None) == {"value": None, "met": False}
    # what results.json stores is what the record holds
    assert json.loads(json.dumps(t, default=wd._default)) == json.loads(json.dumps(t))


def test_walk_targets_lists_every_record_with_its_dotted_path_in_order():
    tree = {"b_first": {"per_set": {"wine": report.target(True, gap=1.0),
                                    "iris": report.target(False, gap=-2.0)},
                        "met": False},
            "bare_bool": True,                                  # not a record
            "other_name": {"ahead": True, "gap": 0.1},          # not a record
            "none_met": {"met": None},                          # not a record
            "missing": None,
            "listed": {"per_budget": [report.target(True, budget=0.5), 3,
                                      report.target(False, budget=0.7)], "met": True},
            "a_last": report.target(True)}
    walked = report.walk_targets(tree)
    assert [p for p, _ in walked] == ["b_first", "b_first.per_set.wine", "b_first.per_set.iris",
                                      "listed", "listed.per_budget.0", "listed.per_budget.2",
                                      "a_last"]
    assert walked[2][1] is tree["b_first"]["per_set"]["iris"]
    assert [p for p, _ in report.walk_targets(tree["listed"], "x")] == [
        "x", "x.per_budget.0", "x.per_budget.2"]
    assert report.walk_targets({"a": True, "b": [1, {"met": "yes"}]}) == []


def test_verdict_of_a_record_or_a_bool():
    assert report.verdict(report.target(True)) == "MET"
    assert report.verdict({"met": False, "x": 1}) == "MISSED"
    assert report.verdict(True) == "MET" and report.verdict(np.bool_(False)) == "MISSED"


def test_met_of_reads_a_record_or_a_bare_bool_as_old_results_store_it():
    assert report.met_of(report.target(True, x=1.0)) is True
    assert report.met_of({"x": 1.0, "met": False}) is False
    assert report.met_of(True) is True and report.met_of(np.bool_(False)) is False
    assert report.met_of(None) is None                        # not evaluated: no verdict


def test_met_tree_is_the_bare_bool_form_of_a_tree_of_records():
    """Records become their bool wherever they sit; numbers, None, bare bools, non-record
    dicts (no bool "met") keep their value and order: the old stored form exactly."""
    new = {"b": {"x": report.target(False, r=0.5), "n": 3},
           "list": [report.target(True), None, 2.0],
           "old": True, "none_met": {"met": None}, "all_met": False,
           "a": report.target(True, per={"y": report.target(False)})}
    old = {"b": {"x": False, "n": 3}, "list": [True, None, 2.0], "old": True,
           "none_met": {"met": None}, "all_met": False, "a": True}
    assert report.met_tree(new) == old
    assert json.dumps(report.met_tree(new)) == json.dumps(old)     # same keys in the same order
    assert report.met_tree(old) == old and report.met_tree(report.target(False)) is False


def _tool(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "targets.py"), *args],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": ROOT})


def _run(path, results, tag):
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps(results, sort_keys=True))
    if tag is not None:
        (path / "config.json").write_text(json.dumps({"tag": tag}))
    return str(path)


def test_tool_prints_one_line_per_target_of_each_run(tmp_path):
    dsl = _run(tmp_path / "a", {"targets": {
        "full_data": {"met": True, "per_dataset": {"wine": {"dsl_minus_mlp": 0.0, "met": True}},
                      "tolerance": 0.01},
        "low_data": {"met": False, "per_dataset": {"wine": {"ahead": False}}}}}, "dsl_quick")
    editlord = _run(tmp_path / "editlord_editlord_quick",
                    {"targets": {"rule_recovery": {"detail": "p", "met": False}}}, "quick")
    none = _run(tmp_path / "b", {"score": 1}, None)
    proc = _tool(f"--workdir={dsl},{editlord},{none}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"{dsl} dsl_quick full_data: MET",
        f"{dsl} dsl_quick full_data.per_dataset.wine: MET",
        f"{dsl} dsl_quick low_data: MISSED",
        f"{editlord} quick rule_recovery: MISSED"]
    assert proc.stderr.strip() == f"targets: no target records in {none}/results.json"


def test_tool_reads_a_results_file_given_itself_tagged_by_its_name(tmp_path):
    path = tmp_path / "front.json"
    path.write_text(json.dumps({"targets": {"floor": {"best": 0.9, "met": False}}}))
    proc = _tool(f"--workdir={path}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"{path} front floor: MISSED"]


def test_tool_names_a_missing_or_unreadable_results_file_before_any_output(tmp_path):
    good = _run(tmp_path / "good", {"targets": {"t": {"met": True}}}, "dsl_quick")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results.json").write_text("{not json")
    for other, path in ((bad, bad / "results.json"),
                        (tmp_path / "absent", tmp_path / "absent" / "results.json")):
        proc = _tool(f"--workdir={good},{other}")
        assert proc.returncode == 2
        assert proc.stdout == ""
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"targets: cannot read {path}: ")


def test_tool_help_lists_the_workdir_flag():
    proc = _tool("--help")
    assert "--workdir:" in proc.stdout and "Run directories" in proc.stdout
