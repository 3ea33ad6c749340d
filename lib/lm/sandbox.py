"""Run generated code in a throw-away copy of a directory, with limits and no network.

    result = run_in_copy("path/to/project", ["python3", "solution.py"],
                         limits=Limits(wall_s=10, cpu_s=10, memory_mb=1024))
    report = run_pytest("path/to/project", ["tests/test_x.py"])
    report.status   # {"tests/test_x.py::test_a": "PASSED", ...}

What the sandbox does (and does not):

* copies `src_dir` into a fresh temporary directory `<root>/work` (symlinks kept as links)
  and runs the command there with HOME and TMPDIR inside `<root>`; the source is never
  touched, and the whole `<root>` is deleted afterwards (unless `keep=True`). Writes to
  relative paths, $HOME and $TMPDIR therefore stay in the copy. It is *not* a chroot:
  a process that writes to an absolute path elsewhere can, within RLIMIT_FSIZE;
* limits through `resource.setrlimit`, set by a small launcher that then execs the
  command (so the limits bind the command and all its children): RLIMIT_CPU (CPU seconds; SIGXCPU then
  SIGKILL), RLIMIT_AS (address space, so large allocations fail with MemoryError /
  ENOMEM), RLIMIT_FSIZE (largest file written), RLIMIT_CORE = 0; plus a wall-clock
  timeout after which the whole process group (a new session) is killed with SIGKILL;
* network: `network="none"` (default) runs the command inside a new, empty network
  namespace with `unshare -n` (as root; `unshare -rn`, a user namespace, otherwise), where
  only a downed loopback exists, so every connect fails. Where namespaces are unavailable,
  `isolation="python_guard"` (chosen by `"auto"`) is the documented alternative: a
  `sitecustomize.py` on PYTHONPATH makes `socket.connect`/`connect_ex`/`sendto` raise
  `PermissionError` for internet sockets in every *Python* process the command starts
  (non-Python programs are not covered; that is why namespaces come first). Both are
  tested to refuse a connection to a listening loopback server;
* stdout and stderr go to files (so unbounded output cannot exhaust memory) and come back
  truncated to `max_output_bytes` each, keeping the head and the tail.

`run_pytest` runs `python -m pytest -v -rA --continue-on-collection-errors` in the sandbox and parses the per-test statuses
from its output (`parse_pytest_log`): PASSED, FAILED, SKIPPED, ERROR, XFAIL (XPASS counts
as PASSED, as SWE-bench's grading does; a test that passed but errored in teardown is ERROR;
a module that fails to import is one ERROR entry for the file).
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (e.g. no way to isolate the network)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 60
    memory_mb: int = 2048
    file_mb: int = 64
    max_output_bytes: int = 64_000

    def __post_init__(self):
        for name in ("wall_s", "cpu_s", "memory_mb", "file_mb", "max_output_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} = {getattr(self, name)} must be > 0")


@dataclasses.dataclass
class RunResult:
    returncode: int          # negative: killed by that signal
    stdout: str
    stderr: str
    timed_out: bool          # the wall-clock limit killed it
    wall_s: float
    isolation: str           # "unshare" | "python_guard" | "none"
    stdout_bytes: int        # sizes before truncation
    stderr_bytes: int
    root: str | None = None  # the sandbox directory when keep=True (else deleted)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def signal_name(self) -> str | None:
        return signal.Signals(-self.returncode).name if self.returncode < 0 else None


@functools.cache
def _unshare_prefix() -> tuple[str, ...] | None:
    """The `unshare` command that gives an empty network namespace here, or None."""
    exe = shutil.which("unshare")
    if exe is None:
        return None
    for prefix in ((exe, "-n"), (exe, "-rn")):
        try:
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return prefix
    return None


def namespaces_available() -> bool:
    return _unshare_prefix() is not None


_GUARD = '''"""Installed by lib/lm/sandbox.py: internet sockets may not connect."""
import socket as _s
_FAMILIES = {_s.AF_INET, getattr(_s, "AF_INET6", _s.AF_INET)}
def _deny(*a, **k):
    raise PermissionError("network access is disabled in this sandbox")
_orig_connect, _orig_connect_ex, _orig_sendto = _s.socket.connect, _s.socket.connect_ex, _s.socket.sendto
def _connect(self, *a, **k):
    if self.family in _FAMILIES: _deny()
    return _orig_connect(self, *a, **k)
def _connect_ex(self, *a, **k):
    if self.family in _FAMILIES: _deny()
    return _orig_connect_ex(self, *a, **k)
def _sendto(self, *a, **k):
    if self.family in _FAMILIES: _deny()
    return _orig_sendto(self, *a, **k)
_s.socket.connect, _s.socket.connect_ex, _s.socket.sendto = _connect, _connect_ex, _sendto
'''


def _truncate(data: bytes, limit: int) -> str:
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    half = limit // 2
    return (data[:half].decode("utf-8", errors="replace")
            + f"\n[... {len(data) - 2 * half} bytes truncated ...]\n"
            + data[-half:].decode("utf-8", errors="replace"))


_LAUNCHER = (
    "import os, resource, sys\n"
    "cpu, mem, size = (int(v) for v in sys.argv[1:4])\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "os.execvp(sys.argv[4], sys.argv[4:])\n")


def _limited(cmd: Sequence[str], limits: Limits) -> list[str]:
    """`cmd` behind a tiny Python launcher that sets the rlimits and then execs it (no
    `preexec_fn`: forking a multithreaded parent such as a JAX process is unsafe)."""
    return [sys.executable, "-S", "-c", _LAUNCHER, str(int(limits.cpu_s)),
            str(int(limits.memory_mb) * 2 ** 20), str(int(limits.file_mb) * 2 ** 20), *cmd]


def _choose_isolation(network: str, isolation: str) -> str:
    if network == "allow":
        return "none"
    if network != "none":
        raise ValueError(f"network = {network!r}; expected 'none' or 'allow'")
    if isolation not in ("auto", "unshare", "python_guard"):
        raise ValueError(f"isolation = {isolation!r}; expected auto, unshare or python_guard")
    if isolation == "unshare" and not namespaces_available():
        raise SandboxError("isolation='unshare' asked for, but `unshare -n`/`unshare -rn` does "
                           "not work here; use isolation='python_guard' (Python code only)")
    if isolation == "auto":
        return "unshare" if namespaces_available() else "python_guard"
    return isolation


def run_in_copy(src_dir: str | None, cmd: Sequence[str], *, limits: Limits = Limits(),
                network: str = "none", isolation: str = "auto",
                env: Mapping[str, str] | None = None, files: Mapping[str, str] | None = None,
                keep: bool = False) -> RunResult:
    """Run `cmd` in a temporary copy of `src_dir` (None: an empty directory) under `limits`.

    `files` = {relative path: text} are written into the copy first (e.g. a generated
    solution). `env` adds variables to the minimal environment (PATH, HOME, TMPDIR, LANG).
    """
    if not cmd:
        raise ValueError("empty command")
    if src_dir is not None and not os.path.isdir(src_dir):
        raise ValueError(f"source directory {src_dir!r} does not exist")
    mode = _choose_isolation(network, isolation)
    root = tempfile.mkdtemp(prefix="lm_sandbox_")
    try:
        work = os.path.join(root, "work")
        if src_dir is None:
            os.makedirs(work)
        else:
            shutil.copytree(src_dir, work, symlinks=True)
        for rel, text in (files or {}).items():
            path = os.path.normpath(os.path.join(work, rel))
            if not path.startswith(work + os.sep):
                raise ValueError(f"file {rel!r} would be written outside the sandbox")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        for d in ("home", "tmp"):
            os.makedirs(os.path.join(root, d))
        child_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                     "HOME": os.path.join(root, "home"), "TMPDIR": os.path.join(root, "tmp"),
                     "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        child_env.update(env or {})
        full_cmd = _limited(cmd, limits)
        if mode == "unshare":
            full_cmd = [*_unshare_prefix(), "--", *full_cmd]
        elif mode == "python_guard":
            guard = os.path.join(root, "guard")
            os.makedirs(guard)
            with open(os.path.join(guard, "sitecustomize.py"), "w") as f:
                f.write(_GUARD)
            child_env["PYTHONPATH"] = os.pathsep.join(
                [guard] + ([child_env["PYTHONPATH"]] if child_env.get("PYTHONPATH") else []))
        out_path, err_path = os.path.join(root, "stdout"), os.path.join(root, "stderr")
        t0 = time.perf_counter()
        timed_out = False
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(full_cmd, cwd=work, env=child_env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True)
            try:
                proc.wait(timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        wall = time.perf_counter() - t0
        with open(out_path, "rb") as f:
            so = f.read()
        with open(err_path, "rb") as f:
            se = f.read()
        return RunResult(proc.returncode, _truncate(so, limits.max_output_bytes),
                         _truncate(se, limits.max_output_bytes), timed_out, wall, mode,
                         len(so), len(se), root if keep else None)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


# ----------------------------------------------------------------------------- pytest

_PROGRESS = re.compile(r"^(?P<id>\S.*?) (?P<st>PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)"
                       r"(?: \(.*\))?\s+\[\s*\d+%\]\s*$")
_SUMMARY = re.compile(r"^(?P<st>PASSED|FAILED|ERROR|XFAIL|XPASS) (?P<id>\S.*?)(?: - .*)?$")
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


def parse_pytest_log(text: str) -> dict[str, str]:
    """{test id: status} from `pytest -v -rA` output (see the module docstring)."""
    status: dict[str, str] = {}

    def put(test_id: str, st: str) -> None:
        st = "PASSED" if st == "XPASS" else st
        old = status.get(test_id)
        if old is None or _RANK[st] > _RANK[old]:
            status[test_id] = st

    for line in text.splitlines():
        m = _PROGRESS.match(line)
        if m:
            put(m.group("id"), m.group("st"))
            continue
        m = _SUMMARY.match(line)
        if m and ("::" in m.group("id") or m.group("st") == "ERROR"):
            put(m.group("id"), m.group("st"))
    return status


@dataclasses.dataclass
class PytestReport:
    status: dict[str, str]
    result: RunResult

    def counts(self) -> dict[str, int]:
        return {s: sum(v == s for v in self.status.values()) for s in STATUSES}


def run_pytest(project_dir: str, args: Sequence[str] = (), *, limits: Limits = Limits(),
               python: str = sys.executable, **kw) -> PytestReport:
    """pytest in a sandboxed copy of `project_dir`; the per-test status map.

    SandboxError when pytest produced no parsable result at all (e.g. it is not
    installed, or the run was killed before reporting): never an empty map that could be
    mistaken for "no tests failed".
    """
    cmd = [python, "-m", "pytest", "-v", "-rA", "-p", "no:cacheprovider", "-o", "addopts=",
           "--continue-on-collection-errors",
           "--color=no", *args]
    # parse everything pytest printed (the log file is bounded by RLIMIT_FSIZE)
    wide = dataclasses.replace(limits, max_output_bytes=max(limits.max_output_bytes,
                                                            limits.file_mb * 2 ** 20))
    result = run_in_copy(project_dir, cmd, limits=wide, **kw)
    status = parse_pytest_log(result.stdout)
    if not status and result.returncode != 5:      # 5: pytest collected no tests
        raise SandboxError(f"pytest produced no test results (exit {result.returncode}, "
                           f"timed_out={result.timed_out}); stderr: {result.stderr[-500:]}")
    return PytestReport(status, result)
