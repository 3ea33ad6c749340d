"""tools/results.py: one command prints and splices every paper's results block; a paper's
own flags, default workdir and block function come from its lib/<paper>/report.py."""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

from tests.lm.test_lm_report import CONFIG as LM_CONFIG, RESULTS as LM_RESULTS
from tools import results as tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(cwd, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "results.py"), *args],
                          cwd=cwd, check=False, capture_output=True, text=True)


def _workdir(path, results=LM_RESULTS, config=LM_CONFIG):
    path.mkdir(parents=True)
    (path / "results.json").write_text(json.dumps(results))
    (path / "config.json").write_text(json.dumps(config))
    return path


def test_papers_are_the_twenty_experiments():
    papers = tool.papers()
    assert len(papers) == 20 and {"lm", "multipdenet", "swe_gym"} <= set(papers)
    assert "common" not in papers


def test_it_splices_the_papers_render_into_the_readme_and_prints_it(tmp_path):
    from lib.lm import report
    workdir = _workdir(tmp_path / "run")
    readme = tmp_path / "README.md"
    readme.write_text("head\n<!-- results:small:begin -->\nold\n<!-- results:small:end -->\n"
                      "<!-- results:quick:begin -->\nkeep\n<!-- results:quick:end -->\ntail\n")
    proc = _run(tmp_path, "--paper=lm", f"--workdir={workdir}", f"--readme={readme}",
                "--tag=small")
    assert proc.returncode == 0, proc.stderr
    text = report.render(LM_RESULTS, LM_CONFIG)
    assert proc.stdout == text + "\n"
    assert readme.read_text() == (
        f"head\n<!-- results:small:begin -->\n{text}\n<!-- results:small:end -->\n"
        "<!-- results:quick:begin -->\nkeep\n<!-- results:quick:end -->\ntail\n")


def test_without_readme_it_only_prints_from_the_default_workdir(tmp_path):
    _workdir(tmp_path / "workdirs" / "lm_quick")
    def files():
        return {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    before = files()
    proc = _run(tmp_path, "--paper=lm")
    assert proc.returncode == 0, proc.stderr
    assert "| target | ≥ 0.95: MET |" in proc.stdout
    assert files() == before


def test_bad_input_stops_with_one_line(tmp_path):
    proc = _run(tmp_path, "--paper=lm", "--workdir=nowhere")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f"no {os.path.join('nowhere', 'results.json')}; "
                                   "run experiments/lm/main.py first")
    proc = _run(tmp_path, "--paper=nope")
    assert proc.returncode == 1 and proc.stderr.startswith("--paper=nope: not one of adam_abc, ")
    proc = _run(tmp_path, f"--workdir={_workdir(tmp_path / 'run')}")
    assert proc.returncode == 1 and proc.stderr.startswith("--paper is required: one of ")
    proc = _run(tmp_path, "--paper=lm", f"--workdir={tmp_path / 'run'}",
                f"--readme={tmp_path / 'run' / 'config.json'}")
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(
        "expected exactly one '<!-- results:quick:begin -->', found 0")


def test_help_lists_the_papers_own_flags_and_default_workdir(tmp_path):
    out = _run(tmp_path, "--paper=risk_irl", "--help").stdout
    for line in ("--readme:", "--tag:", "(default: 'quick')", "--workdir:",
                 "(default: 'workdirs/risk_irl_quick_humans')"):
        assert line in out
    out = _run(tmp_path, "--paper=dynamic_detr", "--help").stdout
    assert "--seed_workdirs:" in out and "(default: 'workdirs/dynamic_detr_quick')" in out


def test_a_papers_flag_reaches_its_block(tmp_path):
    """--seed_workdirs: the AP of every variant across the runs, each labelled by its seed."""
    from tests.dynamic_detr.test_dynamic_detr_report import CONFIG, RESULTS
    run = _workdir(tmp_path / "run", RESULTS, CONFIG)
    seed = _workdir(tmp_path / "seed3", RESULTS, {**CONFIG, "train": {"seed": 3}})
    proc = _run(tmp_path, "--paper=dynamic_detr", f"--workdir={run}", f"--seed_workdirs={seed}")
    assert proc.returncode == 0, proc.stderr
    assert "AP across runs:" in proc.stdout and "seed 3" in proc.stdout


def _declared(paper):
    """(RESULTS_FLAGS literal, {hook name: its parameter names} for the module's
    `results_block` and `publish_results`) of a report module, read from its source."""
    tree = ast.parse(open(os.path.join(ROOT, "lib", paper, "report.py")).read())
    spec, hooks = {}, {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "RESULTS_FLAGS"
                                                for t in node.targets):
            spec = ast.literal_eval(node.value)
        if isinstance(node, ast.FunctionDef) and node.name in ("results_block", "publish_results"):
            hooks[node.name] = [a.arg for a in node.args.args]
    return spec, hooks


@pytest.mark.parametrize("paper", tool.papers())
def test_declared_flags_match_the_block_and_publish_functions(paper):
    spec, hooks = _declared(paper)
    for name, (kind, _, help_) in spec.items():
        assert kind in tool.KINDS and help_, (name, kind)
    if spec:
        assert "results_block" in hooks, "RESULTS_FLAGS without a results_block"
    for hook, params in hooks.items():  # both get the paper's flags as keywords
        assert params == ["results", "config", "workdir", *spec], hook


def _published_run(tmp_path, **changes):
    """A finished lm run with a targets tree, and a README with a `small` block."""
    from lib.lm import report
    results = {**LM_RESULTS, "targets": report.targets(LM_RESULTS), **changes}
    workdir = _workdir(tmp_path / "run", results)
    readme = tmp_path / "exp" / "README.md"
    readme.parent.mkdir()
    readme.write_text("<!-- results:small:begin -->\nold\n<!-- results:small:end -->\n")
    return workdir, readme, results


def test_publish_writes_the_runs_targets_and_provenance_beside_the_readme(tmp_path):
    workdir, readme, results = _published_run(tmp_path)
    proc = _run(tmp_path, "--paper=lm", f"--workdir={workdir}", f"--readme={readme}",
                "--tag=small", "--publish")
    assert proc.returncode == 0, proc.stderr
    out = json.loads((readme.parent / "results_small.json").read_text())
    assert out["targets"] == results["targets"] == {
        "held_out_exact_match": {"exact_match": 0.96, "threshold": 0.95, "met": True}}
    assert (out["paper"], out["config"], out["readme_tag"], out["scale"], out["workdir"],
            out["machine"], out["wall_s"]) == ("lm", "tiny", "small", "quick", str(workdir),
                                               "x86_64, 2 CPU cores", 4.0)
    assert "model" not in out and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00",
                                               out["finished"])
    assert proc.stdout.rstrip("\n") in readme.read_text()      # the block of the same run
    proc = _run(tmp_path, "--paper=lm", f"--workdir={workdir}", f"--readme={readme}",
                "--tag=small", "--publish", "--scale=official")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((readme.parent / "results_small.json").read_text())["scale"] == "official"
    assert [tool.scale_of({"tag": t}) for t in ("x_official", "x_gpu", "x_quick", None)] == [
        "official", "gpu", "quick", "quick"]


@pytest.mark.parametrize("case", ["missing", "incomplete", "no_targets"])
def test_publish_refuses_a_run_without_finished_results(tmp_path, case):
    workdir, readme, _ = _published_run(tmp_path, complete=case != "incomplete")
    results = workdir / "results.json"
    if case == "missing":
        results.unlink()
    if case == "no_targets":
        results.write_text(json.dumps(LM_RESULTS))
    before = readme.read_text()
    proc = _run(tmp_path, "--paper=lm", f"--workdir={workdir}", f"--readme={readme}",
                "--tag=small", "--publish")
    assert proc.returncode == 2 and proc.stdout == ""
    line = proc.stderr.strip()
    assert "\n" not in line and line.startswith("--publish refused: ")
    assert str(results) in line
    assert {"missing": "run experiments/lm/main.py first", "incomplete": '"complete": false',
            "no_targets": 'no "targets" tree'}[case] in line
    assert readme.read_text() == before and not (readme.parent / "results_small.json").exists()


def test_publish_needs_a_readme(tmp_path):
    workdir, _, _ = _published_run(tmp_path)
    proc = _run(tmp_path, "--paper=lm", f"--workdir={workdir}", "--publish")
    assert proc.returncode == 1 and proc.stderr.strip().startswith("--publish needs --readme")
