"""tools/test_budget.py: pytest's durations report read into per-test, per-file and per-package
totals; a real pytest run in a child process measured."""
import json
import os

import pytest

from tools import test_budget

LOG = """\
tests/a/test_x.py ....                                                   [100%]
0.50s call     tests/a/test_x.py::test_printed_by_a_test_not_a_row
============================= slowest 5 durations ============================
12.00s setup    tests/a/test_x.py::test_one
3.00s call     tests/a/test_x.py::test_one
1.50s call     tests/a/test_y.py::test_two[a b]
0.25s teardown tests/a/test_x.py::test_one
2.00s call     tests/test_top.py::test_three
============================== 4 passed in 19.00s ==============================
9.00s call     tests/after/test_summary.py::test_not_a_row
"""


def test_parse_reads_only_the_durations_section():
    rows = test_budget.parse_durations(LOG)
    assert [(r["seconds"], r["phase"], r["nodeid"]) for r in rows] == [
        (12.0, "setup", "tests/a/test_x.py::test_one"),
        (3.0, "call", "tests/a/test_x.py::test_one"),
        (1.5, "call", "tests/a/test_y.py::test_two[a b]"),
        (0.25, "teardown", "tests/a/test_x.py::test_one"),
        (2.0, "call", "tests/test_top.py::test_three")]


def test_summary_sums_per_file_and_package_largest_first():
    s = test_budget.summarise(test_budget.parse_durations(LOG), top=2)
    assert [r["seconds"] for r in s["slowest"]] == [12.0, 3.0]
    assert s["total_s"] == 18.75
    assert s["files"][0] == {"name": "tests/a/test_x.py", "setup": 12.0, "call": 3.0,
                             "teardown": 0.25, "total": 15.25}
    assert [(d["name"], d["total"]) for d in s["packages"]] == [("tests/a", 16.75),
                                                                ("tests", 2.0)]


def test_output_without_durations_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="--durations=0"):
        test_budget.parse_durations("== 3 passed in 1.0s ==\n")
    log = tmp_path / "plain.log"
    log.write_text("== 3 passed in 1.0s ==\n")
    with pytest.raises(SystemExit) as e:
        test_budget.main([f"--out={tmp_path}", f"--log={log}"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "plain.log" in err and "--durations=0" in err
    with pytest.raises(SystemExit):
        test_budget.main([f"--out={tmp_path}", f"--log={tmp_path / 'missing.log'}"])
    assert "missing.log: no such file" in capsys.readouterr().err


def test_a_real_run_is_measured_and_written(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)   # the child pytest: not this session's options
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_busy():\n    sum(i * i for i in range(3_000_000))\n")
    out = tmp_path / "out"
    assert test_budget.main([f"--out={out}", str(probe), "--pytest_args=-p no:xdist"]) == 0
    report = json.load(open(out / "budget.json"))
    (run,) = report["runs"]
    assert run["returncode"] == 0 and run["cpu_s"] > 0.1
    calls = [r for r in report["summary"]["slowest"] if r["phase"] == "call"]
    assert len(calls) == 1 and calls[0]["nodeid"].endswith("test_probe.py::test_busy")
    assert calls[0]["seconds"] > 0.05
    assert "test_busy" in open(os.path.join(out, "budget.md")).read()


def test_the_file_order_record_round_trips_and_orders_the_slowest_file_first(tmp_path):
    from tests import file_order

    log = tmp_path / "run.log"
    log.write_text(LOG)
    record = tmp_path / "seconds.json"
    assert test_budget.main([f"--out={tmp_path / 'out'}", f"--log={log}",
                             f"--file_order={record}"]) == 0
    seconds = file_order.load(str(record))
    assert list(seconds.items()) == [("tests/a/test_x.py", 15.25), ("tests/test_top.py", 2.0),
                                     ("tests/a/test_y.py", 1.5)]
    collected = ["tests/a/test_y.py::test_two[a b]", "tests/new/test_n.py::test_m",
                 "tests/a/test_x.py::test_one", "tests/a/test_x.py::test_four",
                 "tests/test_top.py::test_three", "tests/new/test_o.py::test_p"]
    assert file_order.slowest_first(collected, seconds) == [
        "tests/a/test_x.py::test_one", "tests/a/test_x.py::test_four",   # together, in order
        "tests/test_top.py::test_three", "tests/a/test_y.py::test_two[a b]",
        "tests/new/test_n.py::test_m", "tests/new/test_o.py::test_p"]    # unrecorded: as found
    assert file_order.load(str(tmp_path / "none.json")) == {}


def test_this_session_starts_the_recorded_slowest_files_first(request):
    from tests import file_order

    seconds = file_order.load()
    assert seconds and all(os.path.isfile(os.path.join(test_budget.ROOT, f)) for f in seconds), \
        "tests/file_seconds.json names a file that is gone: write it again (tests/file_order.py)"
    files = list(dict.fromkeys(file_order.file_of(item.nodeid) for item in request.session.items))
    recorded = [seconds.get(f, 0.0) for f in files]
    assert recorded == sorted(recorded, reverse=True)
    assert request.config.option.loadscopereorder is False       # xdist keeps this order
