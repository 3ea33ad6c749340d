"""CPU seconds per test phase, as a pytest plugin: `--cpu_log=PATH`.

The suite is CPU-bound (on 2 idle cores its workers keep both busy), so what a test costs is
its CPU time, not its wall time: under three workers a test's duration includes the time
the others held its core. With `--cpu_log`, each setup / call / teardown is measured as

    own       CPU (user + system) of the test's process over the phase, all its threads
              (XLA compiles on several)
    children  CPU of the processes the phase started and waited for (subprocess tests,
              notebook kernels, servers stopped at teardown): RUSAGE_CHILDREN's growth

and each process's whole-session CPU (collection included) is recorded beside them: every
xdist worker's (up to its session's end, not its exit), and "main", the process pytest
started, whose children include its workers, so its own + children is the session's CPU.
The controller (or the one process) writes the record as JSON to PATH when the session
ends; `tools/test_budget.py --cpu_log=PATH` turns it into tables. tests/conftest.py loads
this plugin for the suite; elsewhere `-p tests.cpu_account`.

A module fixture's cost shows in the setup of the first test that uses it. A child still
running when its phase ends (a server left for later tests) is counted when it is reaped.
"""
from __future__ import annotations

import json
import os
import resource
import time

import pytest

from lib.common import workdir as wd

PROPERTY = "cpu_s"          # the user_properties entry a measured phase adds to its report
ABOUT = ("CPU seconds per test phase: own (the test's process) and children (processes it "
         "waited for); tests/cpu_account.py")


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's reaped children so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_now() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped children's CPU seconds) so far."""
    return time.process_time(), children_cpu()


def pytest_addoption(parser):
    parser.addoption("--cpu_log", default=None, metavar="PATH",
                     help="write CPU seconds per test phase (own process and waited-for "
                          "subprocesses) and per process to PATH as JSON "
                          "(tools/test_budget.py --cpu_log reads it)")


def _measure(item, phase: str):
    if not item.config.getoption("cpu_log"):
        yield
        return
    own, children = cpu_now()
    yield
    own_after, children_after = cpu_now()
    worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
    item.user_properties.append((PROPERTY, {"phase": phase, "own": round(own_after - own, 3),
                                            "children": round(children_after - children, 3),
                                            "process": worker}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _measure(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _measure(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield from _measure(item, "teardown")


def row_of(report) -> dict | None:
    """{"nodeid", "phase", "own", "children", "process"} of a test report's measurement of its
    own phase (a report carries the entries of the earlier phases too), or None."""
    for name, value in getattr(report, "user_properties", ()):
        if name == PROPERTY and value["phase"] == report.when:
            return {"nodeid": report.nodeid, **value}
    return None


def process_total(name: str) -> dict:
    """{"name", "own", "children"}: this process's CPU seconds since it started."""
    own, children = cpu_now()
    return {"name": name, "own": round(own, 2), "children": round(children, 2)}


class Recorder:
    """Collects the rows (in the xdist controller, from every worker's reports) and the
    processes' totals, and writes them to `path` when the session ends."""

    def __init__(self, config, path: str):
        self.config, self.path = config, path
        self.rows: list[dict] = []
        self.processes: list[dict] = []
        self.worker = hasattr(config, "workerinput")

    def pytest_runtest_logreport(self, report):
        row = None if self.worker else row_of(report)   # a worker's reports reach the controller
        if row is not None:
            self.rows.append(row)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        total = getattr(node, "workeroutput", {}).get(PROPERTY)
        if total is not None:
            self.processes.append(total)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        if self.worker:
            self.config.workeroutput[PROPERTY] = process_total(self.config.workerinput["workerid"])
            return
        # "main": this process; with xdist its children include the workers, so its own +
        # children is the whole session's CPU
        processes = [*self.processes, process_total("main")]
        lines = ",\n".join(json.dumps(r) for r in self.rows)      # a row per line
        wd.write_text_atomic(self.path, f'{{"about": {json.dumps(ABOUT)},\n"processes": '
                                        f'{json.dumps(processes)},\n"rows": [\n{lines}\n]}}\n')


def pytest_configure(config):
    path = config.getoption("cpu_log")
    if path:
        config.pluginmanager.register(Recorder(config, os.path.abspath(path)), "cpu_account_recorder")


def load(path: str) -> dict:
    """The record `--cpu_log` wrote at `path`: {"processes": [...], "rows": [...]}. Raises
    ValueError saying why when the file is not one."""
    try:
        with open(path) as f:
            data = json.load(f)
        if not isinstance(data.get("rows"), list) or not isinstance(data.get("processes"), list):
            raise ValueError("no rows or processes")
    except (OSError, ValueError, AttributeError) as e:
        raise ValueError(f"not a --cpu_log record (tests/cpu_account.py): {e}") from None
    return data
