"""The layout rules of the code trees, read as text (nothing imported)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HISTORY = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def _code_files():
    """Every source file of lib/, configs/ and tools/, and the Python files of experiments/."""
    for tree, suffixes in (("lib", (".py", ".sh")), ("configs", (".py", ".sh")),
                           ("tools", (".py", ".sh")), ("experiments", (".py",))):
        for dirpath, dirs, files in os.walk(os.path.join(ROOT, tree)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in sorted(files):
                if name.endswith(suffixes):
                    yield os.path.join(dirpath, name)


def issue_references(paths) -> list[str]:
    """'path:line: text' of every line naming an issue by number."""
    hits = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if HISTORY.search(line):
                    hits.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    return hits


def test_issue_references_match_the_forms_they_take(tmp_path):
    path = tmp_path / "a.py"
    path.write_text('"""Targets (Issue 13):"""\n# issues 3 and 4\nx = 1  # see issue #7\n'
                    "tissue 5\nissue: none\n")
    assert [h.split(": ", 1)[0] for h in issue_references([str(path)])] == [
        f"{os.path.relpath(path, ROOT)}:{n}" for n in (1, 2, 3)]


def test_code_names_no_issue_numbers():
    """Issue numbers and how the code came to be belong in git and NOTES.md, not in code."""
    hits = issue_references(_code_files())
    assert not hits, "issue numbers in code (history goes to git / NOTES.md):\n" + "\n".join(hits)
