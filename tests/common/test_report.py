"""lib/common/report.py: the README splice, the machine line, cells and reading a run."""
import os

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
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask  # a plain write's mode, not mkstemp's 0600


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


def test_machine_line_says_when_the_process_is_pinned_to_fewer_cores(monkeypatch):
    monkeypatch.setattr(report.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(report.os, "sched_getaffinity", lambda pid: {1})
    assert report.cores_text() == "1 of 2 CPU cores (pinned)"
    assert ", 1 of 2 CPU cores (pinned), " in report.machine()
    monkeypatch.setattr(report.os, "sched_getaffinity", lambda pid: {0, 1})
    assert report.cores_text() == "2 CPU cores"


def test_cell_formats_none_bools_and_numbers():
    assert report.cell(None) == "—"
    assert report.cell(True) == "yes" and report.cell(False) == "no"
    assert report.cell(0.123456) == "0.123" and report.cell(0.123456, 2, "f") == "0.12"
    assert report.cell(12345.0, 3) == "1.23e+04"


def test_read_results_names_the_missing_file_and_the_binary_that_writes_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="; run experiments/demo/main.py first"):
        report.read_results(str(tmp_path), "demo")
    (tmp_path / "results.json").write_text('{"score": 0.5}')
    assert report.read_results(str(tmp_path), "demo") == {"score": 0.5}
