"""tools/results_page.py: RESULTS.md and README.md's flagship row, generated from the committed
results files."""
import json
import os
import re
import subprocess
import sys

import pytest

from lib.common import report
from tools import results_page as rp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_results_page_and_readme_flagship_row_match_the_committed_results():
    assert rp.stale() == [], "stale against the committed results: run tools/results_page.py"


def test_papers_are_the_workspace_rows_in_order():
    text = open(os.path.join(ROOT, "WORKSPACE.md")).read()
    rows = re.findall(r"^\| \d+ \|.*?\| `experiments/(\w+)` \|", text, flags=re.M)
    assert [p.key for p in rp.PAPERS] == rows and len(rows) == 19


def _paper(key, **kw):
    return rp.Paper(key, key.upper(), "a claim", kw.pop("target", "a target"), "no", "why not",
                    "Results", "README.md#Results", **kw)


def _tree(root, files):
    """A repository at `root`: experiments/<key>/README.md with a Results heading, the given
    results files {relative path: object}, and a README.md with the flagship markers."""
    for key in ("named", "summary", "empty"):
        os.makedirs(root / "experiments" / key)
        (root / "experiments" / key / "README.md").write_text(
            "# Paper\n\n```\n# not a heading\n```\n\n## Results\n")
    for path, obj in files.items():
        (root / path).write_text(json.dumps(obj))
    (root / "README.md").write_text(
        "# Top\n\n<!-- results:flagship:begin -->\n<!-- results:flagship:end -->\n")


@pytest.fixture
def toy(tmp_path, monkeypatch):
    targets = {"targets": {"good": report.target(True, value=0.25, bound=0.5),
                           "bad": report.target(False, value=2.0, bound=1.0,
                                                per=[report.target(True)])}}
    _tree(tmp_path, {"experiments/named/front.json": targets,
                     "experiments/summary/results_official.json": targets,
                     "experiments/summary/results_quick.json": {"rmse": 0.1}})
    papers = (_paper("named", target="value ≤ {bound:g}", number="{value:.2f}",
                     sources=(rp.Source("front.json", "good", "quick"),)),
              _paper("summary"), _paper("empty"))
    monkeypatch.setattr(rp, "PAPERS", papers)
    monkeypatch.setattr(rp, "FLAGSHIP", "named")
    return tmp_path


def _row(page, name):
    return next(line for line in page.splitlines() if line.startswith(f"| [{name}]("))


def test_verdict_and_number_are_read_from_the_target_records(toy, monkeypatch):
    page, block = rp.render(str(toy))
    named = _row(page, "NAMED")
    assert "| value ≤ 0.5 | [0.25](experiments/named/front.json) | quick | **met** |" in named
    # a paper without named sources counts its outermost records: "bad" holds a record itself
    assert "| 1 of 2 targets met | official | **missed** |" in _row(page, "SUMMARY")
    assert "| — | — | **no results file** |" in _row(page, "EMPTY")
    assert "[results_quick.json](experiments/summary/results_quick.json)" not in page
    assert "without target records: [experiments/summary/results_quick.json]" in page
    assert _row(page, "NAMED") in block and "SUMMARY" not in block
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{value:g}",
                                              sources=(rp.Source("front.json", "bad", "gpu"),)),))
    named = _row(rp.render(str(toy))[0], "NAMED")
    assert "| [2](experiments/named/front.json) | gpu | **missed** |" in named
    both = (rp.Source("front.json", "good", "quick"), rp.Source("front.json", "bad", "gpu"))
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{value:g}", sources=both),))
    assert ("| [0.25](experiments/named/front.json) · [2](experiments/named/front.json) "
            "| quick / gpu | **missed** |") in _row(rp.render(str(toy))[0], "NAMED")
    # a source's own number format; two files are two runs
    two = (rp.Source("front.json", "good", "quick", number="good {value:.1f}"),
           rp.Source("results_official.json", "bad", "official"))
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{value:g}", sources=two),))
    (toy / "experiments/named/results_official.json").write_text(
        (toy / "experiments/named/front.json").read_text())
    assert ("| [good 0.2](experiments/named/front.json) · [2](experiments/named/"
            "results_official.json) (2 runs) | quick / official | **missed** |"
            ) in _row(rp.render(str(toy))[0], "NAMED")


def test_a_source_naming_a_subtree_counts_its_outermost_records(toy, monkeypatch):
    tree = {"slopes": {"a": {"avg": report.target(True), "min": report.target(False)},
                       "b": report.target(True, per=[report.target(False)])}}
    (toy / "experiments/named/results_quick.json").write_text(json.dumps({"targets": tree}))
    subtree = (rp.Source("results_quick.json", "slopes", "quick"),)
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{n_met} of {n}",
                                              sources=subtree),))
    assert "| [2 of 3](experiments/named/results_quick.json) | quick | **missed** |" in _row(
        rp.render(str(toy))[0], "NAMED")
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{n_met} of {n}", sources=(
        rp.Source("results_quick.json", "slopes.a", "quick"),)),))
    assert "| [1 of 2](experiments/named/results_quick.json) |" in _row(rp.render(str(toy))[0],
                                                                       "NAMED")


def test_an_entry_that_is_not_a_record_takes_the_verdict_its_source_names(toy, monkeypatch):
    (toy / "experiments/named/results_quick.json").write_text(json.dumps({"targets": {
        "auroc": {"vs_best": {"per_family_met": False, "mean_diff": -0.013, "families": 12}}}}))
    source = rp.Source("results_quick.json", "auroc.vs_best", "quick", met="per_family_met")
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", number="{mean_diff:+.3f} over {families}",
                                              sources=(source,)),))
    assert "| [-0.013 over 12](experiments/named/results_quick.json) | quick | **missed** |" in (
        _row(rp.render(str(toy))[0], "NAMED"))
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", sources=(
        rp.Source("results_quick.json", "auroc.vs_best", "quick", met="families"),)),))
    with pytest.raises(ValueError, match=r"results_quick.json: no bool 'families' at "
                                         r"'auroc.vs_best'"):
        rp.render(str(toy))


def test_a_scale_the_results_file_states_is_the_rows(toy, monkeypatch):
    path = toy / "experiments/summary/results_official.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "scale": "gpu"}))
    assert "| 1 of 2 targets met | gpu | **missed** |" in _row(rp.render(str(toy))[0], "SUMMARY")
    monkeypatch.setattr(rp, "PAPERS", (_paper("summary", number="{value:g}", sources=(
        rp.Source("results_official.json", "good", "official"),)),))
    with pytest.raises(ValueError, match=r"summary/results_official.json: scale 'gpu', but "
                                         r"PAPERS says 'official'"):
        rp.render(str(toy))


def test_check_names_each_stale_file_after_a_results_file_changes(toy):
    assert rp.stale(str(toy)) == ["RESULTS.md", "README.md"]
    rp.write(str(toy))
    assert rp.stale(str(toy)) == []
    path = toy / "experiments/named/front.json"
    results = json.loads(path.read_text())
    results["targets"]["good"]["met"] = False
    path.write_text(json.dumps(results))
    assert rp.stale(str(toy)) == ["RESULTS.md", "README.md"]
    assert "**missed**" in _row(rp.render(str(toy))[0], "NAMED")


def test_a_missing_record_heading_or_file_is_one_line_naming_it(toy, monkeypatch):
    monkeypatch.setattr(rp, "PAPERS", (_paper("named", sources=(rp.Source("front.json", "gone",
                                                                          "quick"),)),))
    with pytest.raises(ValueError, match=r"named/front.json: no target record at 'gone'"):
        rp.render(str(toy))
    monkeypatch.setattr(rp, "PAPERS", (rp.Paper("named", "N", "c", "t", "no", "b", "Results",
                                                "README.md#not a heading"),))
    with pytest.raises(ValueError, match=r"named/README.md: no heading 'not a heading'"):
        rp.render(str(toy))
    (toy / "experiments/named/front.json").write_text("{truncated")
    monkeypatch.setattr(rp, "PAPERS", (_paper("named"),))
    with pytest.raises(ValueError, match=r"^cannot read experiments/named/front.json: Expecting"):
        rp.render(str(toy))


def test_anchor_follows_github_for_punctuation_and_repeated_headings(tmp_path):
    (tmp_path / "R.md").write_text("# Cost–accuracy front (NS, Re = 1000): `x`\n## Targets\n"
                                   "### Targets\n")
    assert rp.link(str(tmp_path), "R.md", "Cost–accuracy front (NS, Re = 1000): `x`") == \
        "R.md#costaccuracy-front-ns-re--1000-x"
    assert rp.link(str(tmp_path), "R.md", "Targets") == "R.md#targets"


def test_check_command_reads_json_only():
    code = ("import runpy, sys\nsys.argv = ['results_page.py', '--check']\n"
            "try:\n    runpy.run_path('tools/results_page.py', run_name='__main__')\n"
            "except SystemExit as e:\n"
            "    print(e.code, 'jax' in sys.modules, 'numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.split() == ["0", "False", "False"], out.stderr
