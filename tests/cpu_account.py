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

Each phase's own CPU is also split by what JAX did in it (`JaxAccount`, from JAX's
monitoring events): `trace` (Python tracing of jitted functions), `lower` (jaxpr to
StableHLO), `compile` (XLA, or a read from the persistent cache), with the number of
programs, and how many of them were one JAX operation called outside jit (`jnp.ones(n) + 1`
compiles one program per new shape) and their lower + compile CPU, from the first phase
after JAX is imported. The CPU is the process's, so a compile running on another thread at
the same time is counted in both. Each process also counts
lower + compile CPU by call site, the innermost workspace line (lib/, tests/, experiments/,
tools/) on the stack: `jax_sites` in the record, the costliest 200.
"""
from __future__ import annotations

import collections
import json
import os
import resource
import sys
import threading
import time

import pytest

from lib.common import workdir as wd

PROPERTY = "cpu_s"          # the user_properties entry a measured phase adds to its report
SITES = "jax_sites"         # a worker's call-site totals, sent to the controller
TOP_SITES = 200
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
JAX_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "trace",
              "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
              "/jax/core/compile/backend_compile_duration": "compile"}
# JAX's own functions and primitives: a program named like one is an operation called outside jit
_JAX_MODULES = ("jax._src.numpy", "jax._src.lax", "jax._src.random", "jax._src.prng",
                "jax._src.nn", "jax._src.scipy", "jax._src.ops")
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


def jax_op_names() -> set[str]:
    """Names of the functions of JAX's numpy, lax, random, nn and scipy modules loaded so far,
    and of every JAX primitive (what a program compiled for one eager operation is named)."""
    from jax._src import core

    names = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith("jax._src.") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, core.Primitive):
                names.add(value.name)
            elif name.startswith(_JAX_MODULES) and callable(value):
                names.add(attr)
    return names


def _program_name(fun_name: str) -> str:
    """'jit(add)' -> 'add'."""
    return fun_name[4:-1] if fun_name.startswith("jit(") and fun_name.endswith(")") else fun_name


def call_site(frame) -> str:
    """'path:line' of the innermost frame of a workspace file (not under site-packages)
    from `frame` outwards, or '?'."""
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(ROOT) and "site-packages" not in path:
            return f"{path[len(ROOT):]}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


class JaxAccount:
    """CPU seconds of JAX's tracing, lowering and compiling in this process (module doc),
    from JAX's monitoring events: `totals` by kind, `sites` {call site: [programs, CPU s,
    of which single operations]} for lower + compile."""

    KEYS = ("trace", "lower", "compile", "programs", "op_programs", "op_s")

    def __init__(self):
        self.totals = dict.fromkeys(self.KEYS, 0.0)
        self.sites: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, 0])
        self._start: dict[tuple[str, int], float] = {}     # (event, thread) -> CPU at its start
        self._ops: set[str] | None = None

    def register(self) -> "JaxAccount":
        from jax import monitoring

        monitoring.register_scalar_listener(self.on_start)
        monitoring.register_event_duration_secs_listener(self.on_end)
        return self

    def unregister(self) -> None:
        from jax import monitoring

        monitoring.unregister_scalar_listener(self.on_start)
        monitoring.unregister_event_duration_listener(self.on_end)

    def on_start(self, event: str, value, **kwargs) -> None:
        if event in JAX_EVENTS:
            self._start[event, threading.get_ident()] = time.process_time()

    def on_end(self, event: str, duration: float, fun_name: str = "", **kwargs) -> None:
        kind = JAX_EVENTS.get(event)
        start = self._start.pop((event, threading.get_ident()), None)
        if kind is None or start is None:
            return
        cpu = time.process_time() - start
        self.totals[kind] += cpu
        if kind == "trace":
            return
        if self._ops is None:
            self._ops = jax_op_names()
        op = _program_name(fun_name) in self._ops
        site = self.sites[call_site(sys._getframe(1))]
        site[1] += cpu
        if kind == "compile":
            self.totals["programs"] += 1
            self.totals["op_programs"] += op
            site[0] += 1
            site[2] += op
        if op:
            self.totals["op_s"] += cpu

    def snapshot(self) -> dict:
        return dict(self.totals)

    def top_sites(self, n: int = TOP_SITES) -> list[dict]:
        rows = [{"site": k, "programs": v[0], "cpu": round(v[1], 3), "op_programs": v[2]}
                for k, v in self.sites.items()]
        return sorted(rows, key=lambda r: -r["cpu"])[:n]


def _measure(item, phase: str):
    if not item.config.getoption("cpu_log"):
        yield
        return
    account = getattr(item.config, "_jax_account", None)
    if account is None and "jax" in sys.modules:    # JAX is loaded: account for it from now on
        account = item.config._jax_account = JaxAccount().register()
    jax_before = account.snapshot() if account else None
    own, children = cpu_now()
    yield
    own_after, children_after = cpu_now()
    worker = getattr(item.config, "workerinput", {}).get("workerid", "main")
    row = {"phase": phase, "own": round(own_after - own, 3),
           "children": round(children_after - children, 3), "process": worker}
    if account:
        row["jax"] = {k: round(v - jax_before[k], 3) for k, v in account.snapshot().items()}
    item.user_properties.append((PROPERTY, row))


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
        self.sites: list[dict] = []
        self.worker = hasattr(config, "workerinput")

    def pytest_runtest_logreport(self, report):
        row = None if self.worker else row_of(report)   # a worker's reports reach the controller
        if row is not None:
            self.rows.append(row)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        output = getattr(node, "workeroutput", {})
        if output.get(PROPERTY) is not None:
            self.processes.append(output[PROPERTY])
        self.sites += [dict(r, process=output[PROPERTY]["name"]) for r in output.get(SITES, [])]

    def _own_sites(self, name: str) -> list[dict]:
        account = getattr(self.config, "_jax_account", None)
        return [dict(r, process=name) for r in account.top_sites()] if account else []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session):
        if self.worker:
            name = self.config.workerinput["workerid"]
            self.config.workeroutput[PROPERTY] = process_total(name)
            self.config.workeroutput[SITES] = self._own_sites(name)
            return
        # "main": this process; with xdist its children include the workers, so its own +
        # children is the whole session's CPU
        processes = [*self.processes, process_total("main")]
        sites = merge_sites(self.sites + self._own_sites("main"))
        lines = ",\n".join(json.dumps(r) for r in self.rows)      # a row per line
        wd.write_text_atomic(self.path, f'{{"about": {json.dumps(ABOUT)},\n"processes": '
                                        f'{json.dumps(processes)},\n"{SITES}": {json.dumps(sites)},\n'
                                        f'"rows": [\n{lines}\n]}}\n')


def merge_sites(rows: list[dict], n: int = TOP_SITES) -> list[dict]:
    """The processes' call-site rows summed by site, costliest `n` first."""
    acc: dict[str, dict] = {}
    for r in rows:
        a = acc.setdefault(r["site"], {"site": r["site"], "programs": 0, "cpu": 0.0, "op_programs": 0})
        for k in ("programs", "cpu", "op_programs"):
            a[k] += r[k]
    return sorted((dict(a, cpu=round(a["cpu"], 3)) for a in acc.values()), key=lambda a: -a["cpu"])[:n]


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
