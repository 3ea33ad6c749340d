"""lib/common/report.py: the README splice and the machine line."""
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


def test_machine_line_names_backend():
    line = report.machine()
    assert "cpu" in line and "jax" in line


def test_cell_formats_none_bools_and_numbers():
    assert report.cell(None) == "—"
    assert report.cell(True) == "yes" and report.cell(False) == "no"
    assert report.cell(0.123456) == "0.123" and report.cell(0.123456, 2, "f") == "0.12"
    assert report.cell(12345.0, 3) == "1.23e+04"
