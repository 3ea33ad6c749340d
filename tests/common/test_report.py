"""lib/common/report.py: the README splice, the machine line and the results-tool command."""
import json
import os
import subprocess
import sys

import pytest

from lib.common import report


def test_splice_replaces_only_the_marked_block(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("head\n<!-- results:quick:begin -->\nold\n<!-- results:quick:end -->\n"
                    "<!-- results:paper:begin -->\nkeep\n<!-- results:paper:end -->\ntail\n")
    report.splice(str(path), "quick", "new table")
    text = path.read_text()
    assert "new table" in text and "old" not in text
    assert "keep" in text and text.startswith("head\n") and text.endswith("tail\n")
    report.splice(str(path), "quick", "again")  # idempotent shape: one block, replaced
    assert path.read_text().count("<!-- results:quick:begin -->") == 1


def test_splice_errors_name_the_missing_or_duplicate_marker(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("no markers here\n")
    with pytest.raises(ValueError, match="results:quick:begin"):
        report.splice(str(path), "quick", "x")
    path.write_text("<!-- results:a:begin -->x<!-- results:a:end -->"
                    "<!-- results:a:begin -->y<!-- results:a:end -->")
    with pytest.raises(ValueError, match="found 2"):
        report.splice(str(path), "a", "z")
    assert "y" in path.read_text()  # untouched on error


def test_machine_line_names_backend_and_load(monkeypatch):
    monkeypatch.setattr(report.os, "getloadavg", lambda: (3.25, 2.0, 1.04))
    line = report.machine()
    assert "cpu" in line and "jax" in line
    assert line.endswith("load average 3.2 / 1.0 (1 / 15 min) at the end")
    assert report.machine_text(line) == line
    old = "x86_64, 2 CPU cores, 1 cpu device(s), jax 0.10.2, numpy 2.4.6"
    assert report.machine_text(old) == old + " (load average not recorded)"


def test_cell_formats_none_bools_and_numbers():
    assert report.cell(None) == "—"
    assert report.cell(True) == "yes" and report.cell(False) == "no"
    assert report.cell(0.123456) == "0.123" and report.cell(0.123456, 2, "f") == "0.12"
    assert report.cell(12345.0, 3) == "1.23e+04"


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_TOOL = ('from lib.common import report\n'
         'report.results_tool("demo", lambda r, c: f"| score |\\n|---|\\n| {r[\'score\']} |'
         '\\n\\nConfig `{c[\'tag\']}`.")\n')


def _run_tool(tmp_path, *args):
    """A `tools/demo_results.py` built on `results_tool`, run in `tmp_path` as a command."""
    (tmp_path / "demo_results.py").write_text(_TOOL)
    return subprocess.run([sys.executable, "demo_results.py", *args], cwd=tmp_path,
                          check=False, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": ROOT})


def _workdir(tmp_path, name="workdirs/demo_quick"):
    workdir = tmp_path / name
    workdir.mkdir(parents=True)
    (workdir / "results.json").write_text(json.dumps({"score": 0.5}))
    (workdir / "config.json").write_text(json.dumps({"tag": "quick"}))
    return workdir


def test_results_tool_names_the_missing_results_file(tmp_path):
    proc = _run_tool(tmp_path, "--workdir=nowhere")
    assert proc.returncode != 0
    assert f"no {os.path.join('nowhere', 'results.json')}; run experiments/demo/main.py first" \
        in proc.stderr


def test_results_tool_help_lists_its_flags_with_the_defaults(tmp_path):
    proc = _run_tool(tmp_path, "--help")           # absl prints the usage and exits with 1
    for line in ("--readme:", "--tag:", "(default: 'quick')", "--workdir:",
                 "(default: 'workdirs/demo_quick')"):
        assert line in proc.stdout


def test_results_tool_splices_the_render_into_the_readme_and_prints_it(tmp_path):
    workdir = _workdir(tmp_path, "run")
    readme = tmp_path / "README.md"
    readme.write_text("head\n<!-- results:small:begin -->\nold\n<!-- results:small:end -->\n"
                      "<!-- results:quick:begin -->\nkeep\n<!-- results:quick:end -->\ntail\n")
    proc = _run_tool(tmp_path, f"--workdir={workdir}", f"--readme={readme}", "--tag=small")
    assert proc.returncode == 0, proc.stderr
    text = "| score |\n|---|\n| 0.5 |\n\nConfig `quick`."
    assert proc.stdout == text + "\n"
    assert readme.read_text() == (
        f"head\n<!-- results:small:begin -->\n{text}\n<!-- results:small:end -->\n"
        "<!-- results:quick:begin -->\nkeep\n<!-- results:quick:end -->\ntail\n")


def test_results_tool_without_readme_only_prints(tmp_path):
    _workdir(tmp_path)                            # the default --workdir: workdirs/demo_quick
    readme = tmp_path / "README.md"
    readme.write_text("<!-- results:quick:begin -->\nold\n<!-- results:quick:end -->\n")
    def files():
        return {p: p.read_bytes() for p in tmp_path.rglob("*")
                if p.is_file() and p.name != "demo_results.py"}

    before = files()
    proc = _run_tool(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "| 0.5 |" in proc.stdout and "Config `quick`." in proc.stdout
    assert files() == before                      # README and workdir untouched, nothing added
