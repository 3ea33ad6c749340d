"""tests/cpu_account.py (`--cpu_log`): each test phase's CPU, in the test's process and in the
subprocesses it waited for, and JAX's tracing, lowering and compiles in it, recorded by a real
pytest run in a child process (one process, then two xdist workers) and read back by
tools/test_budget.py; the JAX account also in this process."""
import json
import os
import subprocess
import sys
import threading

import pytest

from tests import cpu_account
from tools import test_budget

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = """\
import subprocess, sys

def test_child():
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(6_000_000))"], check=True)

def test_own():
    sum(i * i for i in range(3_000_000))
"""


JAX_PROBE = """\
import jax, jax.numpy as jnp

def test_jax():
    jax.jit(lambda x: x * 2 + 1)(jnp.ones(3))
    for n in (5, 6):
        jnp.ones(n) + 1
"""


def _record(tmp_path, *args, probes=("test_probe.py",)) -> dict:
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "test_probe_jax.py").write_text(JAX_PROBE)
    log = tmp_path / "cpu.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.cpu_account",
                           f"--rootdir={tmp_path}", f"--cpu_log={log}", *args, *probes],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
                               "PYTHONPATH": ROOT,    # not this session's options
                               "JAX_ENABLE_COMPILATION_CACHE": "0"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return cpu_account.load(str(log))


def _phases(record) -> dict:
    return {(r["nodeid"].split("::")[1], r["phase"]): r for r in record["rows"]}


def test_each_phase_counts_its_own_and_its_waited_subprocess_cpu(tmp_path):
    record = _record(tmp_path, "-p", "no:xdist")
    phases = _phases(record)
    assert set(phases) == {(t, p) for t in ("test_child", "test_own")
                           for p in ("setup", "call", "teardown")}
    child, own = phases["test_child", "call"], phases["test_own", "call"]
    assert child["children"] > 0.1 and child["own"] < child["children"] / 2, child
    assert own["own"] > 0.1 and own["children"] < 0.01, own
    (main,) = record["processes"]
    # (the processes' totals are rounded to 0.01 s, the phases to 0.001 s)
    assert main["name"] == "main" and main["own"] >= sum(r["own"] for r in record["rows"]) - 0.01
    assert main["children"] >= child["children"] - 0.01

    summary = test_budget.summarise_cpu(record, top=1)
    # twice the work, in a child: the costliest
    assert summary["slowest"][0]["nodeid"].endswith("::test_child")
    (probe,) = summary["files"]
    assert probe["total"] == pytest.approx(sum(r["own"] + r["children"] for r in record["rows"]),
                                           abs=0.01)
    out = tmp_path / "out"
    assert test_budget.main([f"--out={out}", f"--cpu_log={tmp_path / 'cpu.json'}"]) == 0
    assert "in subprocesses they waited for" in (out / "budget.md").read_text()
    assert json.load(open(out / "budget.json"))["cpu"]["files"] == summary["files"]


def test_xdist_workers_report_to_the_controller(tmp_path):
    record = _record(tmp_path, "-n", "2", "--dist", "loadfile",
                     probes=("test_probe.py", "test_probe_jax.py"))
    assert len(record["rows"]) == 9
    # every worker collected the JAX probe, so loaded JAX: every row accounts for it
    assert all("jax" in r for r in record["rows"])
    assert all(r["jax"]["programs"] == 0 for r in record["rows"] if "test_probe.py" in r["nodeid"])
    (call,) = [r["jax"] for r in record["rows"] if r["nodeid"].endswith("::test_jax") and r["phase"] == "call"]
    # one jitted function, and at least ones + add for each of two new shapes
    assert call["programs"] - call["op_programs"] == 1 and call["op_programs"] >= 4, call
    assert call["compile"] > 0 and call["trace"] > 0 and 0 < call["op_s"] <= call["lower"] + call["compile"]
    # the worker's call sites reached the controller (a file outside the workspace is '?')
    assert sum(r["programs"] for r in record["jax_sites"]) == call["programs"]
    summary = test_budget.summarise_cpu(record)
    assert summary["jax"]["programs"] == call["programs"]
    files = {d["name"]: d for d in summary["jax_files"]}
    assert files["test_probe_jax.py"]["programs"] == call["programs"] and files["test_probe.py"]["programs"] == 0
    assert "one JAX operation called outside jit" in "\n".join(test_budget.cpu_markdown(summary))
    names = sorted(p["name"] for p in record["processes"])
    assert names == ["gw0", "gw1", "main"]
    procs = {p["name"]: p for p in record["processes"]}
    # the controller reaps its workers: its children hold at least their CPU
    assert procs["main"]["children"] >= procs["gw0"]["own"] + procs["gw1"]["own"] - 0.02
    assert {r["process"] for r in record["rows"]} <= {"gw0", "gw1"}


def test_a_file_that_is_not_a_record_is_one_line(tmp_path, capsys):
    bad = tmp_path / "pytest.log"
    bad.write_text("== 3 passed in 1.0s ==\n")
    with pytest.raises(SystemExit) as e:
        test_budget.main([f"--out={tmp_path}", f"--cpu_log={bad}"])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f"--cpu_log={bad}: not a --cpu_log record (tests/cpu_account.py): "
        "Expecting value: line 1 column 1 (char 0)")


def test_jax_account_splits_programs_by_kind_and_names_the_call_site():
    """In this process: a jitted function is one program, not an operation; each new shape of
    an eager `jnp.ones(n) + 1` compiles operations, attributed to the line that called them."""
    import jax
    import jax.numpy as jnp

    account = cpu_account.JaxAccount().register()
    try:
        jax.jit(lambda x: x * 3 - 1)(jnp.zeros(1031))
        line = sys._getframe().f_lineno + 2
        for n in (1033, 1039):                  # shapes no other test compiles
            jnp.ones(n) + 1
    finally:
        account.unregister()
    t = account.snapshot()
    assert t["programs"] - t["op_programs"] == 1 and t["op_programs"] >= 4, t
    assert t["trace"] > 0 and t["lower"] > 0 and t["compile"] > 0
    sites = {r["site"]: r for r in account.top_sites()}
    here = f"tests/test_cpu_account.py:{line}"
    assert sites[here]["op_programs"] == sites[here]["programs"] >= 4, sites
    assert cpu_account.call_site(sys._getframe()).startswith("tests/test_cpu_account.py:")


def test_jax_account_matches_each_compile_to_its_own_threads_start():
    """Two compiles overlapping on two threads (start A, start B, end A, end B) are both
    counted: a start is matched by its own thread's end."""
    account = cpu_account.JaxAccount()
    event = "/jax/core/compile/backend_compile_duration"
    b_started, a_ended = threading.Event(), threading.Event()

    def thread_b():
        account.on_start(event, 0.0)
        b_started.set()
        a_ended.wait(10)
        account.on_end(event, 0.0, fun_name="jit(second_program)")

    t = threading.Thread(target=thread_b)
    account.on_start(event, 0.0)
    t.start()
    b_started.wait(10)
    account.on_end(event, 0.0, fun_name="jit(first_program)")
    a_ended.set()
    t.join(10)
    assert account.snapshot()["programs"] == 2 and account.snapshot()["op_programs"] == 0
