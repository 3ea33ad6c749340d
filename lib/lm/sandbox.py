"""Run untrusted (model-written) code in a throw-away copy of a directory, inside a
bubblewrap sandbox, with limits and no network.

    result = run_in_copy("path/to/project", ["python3", "solution.py"],
                         limits=Limits(wall_s=10, cpu_s=10, memory_mb=1024))
    report = run_pytest("path/to/project", ["tests/test_x.py"])
    report.status   # {"tests/test_x.py::test_a": "PASSED", ...}

`src_dir` is copied into a fresh temporary directory `<root>/work` (symlinks kept as links);
the command runs there with HOME=`<root>/home`, TMPDIR=`<root>/tmp`; the source is never
touched and `<root>` is deleted afterwards (unless `keep=True`). stdout and stderr go to files
(unbounded output cannot exhaust memory) and come back truncated to `max_output_bytes` each,
head and tail kept.

Isolation modes (`RunResult.isolation` reports the one used):

* ``"bwrap"`` (the default; `isolation="auto"` means this and nothing else): the command runs
  under bubblewrap (`bwrap`, Debian package `bubblewrap`; `.ci/run` installs it) in new
  user, mount, PID, network, IPC, UTS and cgroup namespaces, as uid/gid 1000 with no
  capabilities, no_new_privs, and no further user namespaces (`--disable-userns`), so it
  cannot `setns` back into the parent's network namespace. What it sees: read-only /usr,
  /bin, /sbin, /lib*, /etc/ld.so.cache and /etc/alternatives, the interpreter's
  `sys.prefix`/`sys.base_prefix` trees (bound alone, never their home directory), a synthetic
  /etc/passwd and /etc/group naming only the sandbox user, a fresh /proc, a minimal /dev, an
  empty private /tmp, and read-write only its copy, HOME and TMPDIR (at the same absolute
  paths as outside). Not the workspace checkout, not /root or /home, not the host's /etc;
  editable-install `.pth` entries that point elsewhere simply do not resolve. The network
  namespace holds only its own loopback (`network="allow"` shares the host network, keeping
  everything else). /tmp and /dev/shm are tmpfs of 4 x `Limits.file_mb`; the rest of /dev
  is read-only. A process limit (`Limits.processes`, tasks at once: processes and threads,
  the command's whole tree) is a pids cgroup when the caller is root (RLIMIT_NPROC is not
  enforced for processes that are root outside); a non-root caller gets RLIMIT_NPROC,
  which the kernel counts per user namespace, so per sandbox; root without a writable pids
  cgroup starts bwrap as FALLBACK_UID (a uid that owns nothing) with RLIMIT_NPROC, which
  needs the interpreter's tree readable by other users (else SandboxError), and gives the
  copy back to the caller afterwards. The wall-clock kill takes the whole tree down:
  the command is in its own PID namespace whose init dies with bwrap
  (`--die-with-parent`), so a `setsid` grandchild dies too, and so does anything the
  command leaves running when it exits. When bwrap is missing or does not work here,
  `SandboxError` says how to install it; there is no silent fallback;
* ``"python_guard"`` -- a WEAK mode, only when explicitly asked for: no filesystem, PID or
  process-count isolation at all; a `sitecustomize.py` on PYTHONPATH makes
  `socket.connect`/`connect_ex`/`sendto` raise PermissionError for internet sockets in
  Python processes (C extensions, `_socket`, bash's /dev/tcp and any other program get
  through). Only for trusted code on machines without user namespaces;
* ``"none"`` -- no isolation (trusted code, overhead measurements); needs `network="allow"`.

In every mode a small launcher sets these limits and then execs the command (so they bind
it and all its children; no `preexec_fn`: forking a multithreaded parent such as a JAX
process is unsafe):
RLIMIT_CPU (SIGXCPU, then SIGKILL), RLIMIT_AS (large allocations fail with MemoryError /
ENOMEM), RLIMIT_FSIZE (largest file written), RLIMIT_CORE = 0; plus a wall-clock timeout
after which the process group (a new session) is killed with SIGKILL. Thread-pool variables
(OMP/OpenBLAS/MKL) default to 1 so numeric libraries stay under the process limit.

Not guaranteed: disk use in the copy is bounded per file (RLIMIT_FSIZE), not in total; kernel
bugs (a sandbox shares the host kernel); timing side channels; CPU time of the sandbox's own
init process; a program that is not under the bound trees (e.g. `python=` a different
interpreter) is not found inside. In bwrap mode a signal death comes back negative as
elsewhere (bwrap's init reports it as 128 + signal, so an exit code above 128 reads the same).

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
import uuid
from collections.abc import Mapping, Sequence

STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
ISOLATIONS = ("bwrap", "python_guard", "none")
SANDBOX_UID = SANDBOX_GID = 1000
TMPFS_FILES = 4      # /tmp and /dev/shm inside hold at most this many Limits.file_mb each
FALLBACK_UID = 1_879_048_193   # root without a pids cgroup starts bwrap as this uid (owns nothing)
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install -y bubblewrap`; .ci/run "
                "does this), or pass isolation='python_guard' to accept the weak Python-only "
                "network guard for trusted code")


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (e.g. bubblewrap missing or not working)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 60
    memory_mb: int = 2048
    file_mb: int = 64
    max_output_bytes: int = 64_000
    processes: int = 64      # tasks (processes + threads) at once in the sandbox (bwrap mode)

    def __post_init__(self):
        for name in ("wall_s", "cpu_s", "memory_mb", "file_mb", "max_output_bytes",
                     "processes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} = {getattr(self, name)} must be > 0")


@dataclasses.dataclass
class RunResult:
    returncode: int          # negative: killed by that signal (bwrap: an exit > 128 too)
    stdout: str
    stderr: str
    timed_out: bool          # the wall-clock limit killed it
    wall_s: float
    isolation: str           # "bwrap" | "python_guard" | "none"
    stdout_bytes: int        # sizes before truncation
    stderr_bytes: int
    root: str | None = None  # the sandbox directory when keep=True (else deleted)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def signal_name(self) -> str | None:
        return signal.Signals(-self.returncode).name if self.returncode < 0 else None


_GUARD = """"\""Installed by lib/lm/sandbox.py: internet sockets may not connect."\""
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
"""


def _truncate(data: bytes, limit: int) -> str:
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    half = limit // 2
    return (data[:half].decode("utf-8", errors="replace")
            + f"\n[... {len(data) - 2 * half} bytes truncated ...]\n"
            + data[-half:].decode("utf-8", errors="replace"))


_LAUNCHER = (
    "import os, resource, sys\n"
    "cpu, mem, size, nproc = (int(v) for v in sys.argv[1:5])\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))\n"
    "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "if nproc:\n"
    "    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))\n"
    "os.execvp(sys.argv[5], sys.argv[5:])\n")


def _limited(cmd: Sequence[str], limits: Limits, nproc: int = 0) -> list[str]:
    """`cmd` behind a tiny Python launcher that sets the rlimits and then execs it."""
    return [sys.executable, "-S", "-c", _LAUNCHER, str(int(limits.cpu_s)),
            str(int(limits.memory_mb) * 2 ** 20), str(int(limits.file_mb) * 2 ** 20),
            str(int(nproc)), *cmd]


# ----------------------------------------------------------------------------- bubblewrap

def _python_trees() -> list[str]:
    """The interpreter's prefix trees (venv and base), deduplicated, outermost first."""
    trees = []
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))):
        p = os.path.abspath(p)
        homes = {"/", "/root", "/home", os.path.expanduser("~")}
        if p in homes or (os.path.dirname(p) == "/home"):
            raise SandboxError(f"the interpreter's tree {p!r} is a home or root directory; "
                               "the sandbox binds an interpreter's own tree only (use a venv)")
        if p not in trees:
            trees.append(p)
    return sorted(trees, key=len)


@functools.cache
def _system_view() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """bwrap arguments for the read-only system view (module docstring), and the host
    directories they cover."""
    args: list[str] = []
    covered: list[str] = []
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
            covered.append(d)
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            covered.append(d)
    for f in ("/etc/ld.so.cache", "/etc/alternatives"):
        args += ["--ro-bind-try", f, f]
    args += ["--proc", "/proc"]
    return tuple(args), tuple(covered)


@functools.cache
def _python_view(covered: tuple[str, ...]) -> tuple[str, ...]:
    """--ro-bind arguments for the interpreter trees not already under `covered`."""
    args: list[str] = []
    done = list(covered)
    for tree in _python_trees():
        real = os.path.realpath(tree)
        if not any(real == c or real.startswith(c + "/") for c in done):
            args += ["--ro-bind", tree, tree]
            done.append(real)
    return tuple(args)


def _bwrap_base(network: str, tmpfs_bytes: int) -> list[str]:
    """bwrap and its fixed arguments: namespaces, identity, the read-only view, a /dev whose
    only writable part is /dev/shm, and /tmp and /dev/shm as tmpfs of `tmpfs_bytes` each."""
    exe = shutil.which("bwrap")
    if exe is None:
        raise SandboxError(f"bubblewrap (`bwrap`) is not on PATH: {INSTALL_HINT}")
    system, covered = _system_view()
    size = str(int(tmpfs_bytes))
    return [exe, "--unshare-all", "--unshare-user", *(["--share-net"] if network == "allow"
                                                       else []),
            "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID), "--hostname", "sandbox",
            *system, "--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev", "--size", size, "--tmpfs", "/tmp",
            *_python_view(covered)]          # after /tmp: a CI venv lives under /tmp


@functools.cache
def _bwrap_works(as_uid: int | None = None) -> str | None:
    """None when a minimal bwrap sandbox runs `true` here (started as `as_uid`), else why not."""
    drop = {} if as_uid is None else {"user": as_uid, "group": as_uid, "extra_groups": []}
    try:
        r = subprocess.run([*_bwrap_base("none", 2 ** 20), "true"], capture_output=True,
                           timeout=30, stdin=subprocess.DEVNULL, cwd="/", **drop)
    except SandboxError as e:
        return str(e)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap could not start: {e}"
    if r.returncode != 0:
        return (f"bwrap does not work here (exit {r.returncode}: "
                f"{r.stderr.decode(errors='replace').strip()[:300]})")
    return None


def bwrap_available() -> bool:
    """Whether the default (bubblewrap) sandbox works on this machine."""
    return _bwrap_works() is None


@functools.cache
def _pids_cgroup_parent() -> str | None:
    """A cgroup directory (v1 pids hierarchy or v2 with the pids controller) under which this
    root process may create per-run cgroups, else None."""
    if os.geteuid() != 0:
        return None
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    candidates = [m[1] for m in mounts if m[2] == "cgroup" and "pids" in m[3].split(",")]
    candidates += [m[1] for m in mounts if m[2] == "cgroup2"]
    for parent in candidates:
        probe = os.path.join(parent, f"lm_sandbox_probe_{uuid.uuid4().hex[:12]}")
        try:
            os.mkdir(probe)
        except OSError:
            continue
        try:
            ok = os.path.exists(os.path.join(probe, "pids.max"))
        finally:
            os.rmdir(probe)
        if ok:
            return parent
    return None


def _process_limit_mechanism() -> str:
    """"rlimit" (non-root caller), "cgroup" (root with a pids cgroup) or "uid" (root without:
    bwrap started as FALLBACK_UID, RLIMIT_NPROC); SandboxError when none works."""
    if os.geteuid() != 0:
        return "rlimit"
    if _pids_cgroup_parent() is not None:
        return "cgroup"
    why = _bwrap_works(FALLBACK_UID)
    if why is None:
        return "uid"
    raise SandboxError("running as root without a writable pids cgroup (v1 `pids` hierarchy or "
                       "cgroup v2 with the pids controller), and bwrap started as uid "
                       f"{FALLBACK_UID} fails ({why}; is the interpreter's tree readable by "
                       "other users?), so the sandbox's processes cannot be limited "
                       "(RLIMIT_NPROC does not bind root); run as a non-root user, give this "
                       "process a writable cgroup, or use an interpreter outside /root")


def _chown_tree(top: str, uid: int, gid: int) -> None:
    os.chown(top, uid, gid, follow_symlinks=False)
    for base, dirs, names in os.walk(top):
        for n in dirs + names:
            os.chown(os.path.join(base, n), uid, gid, follow_symlinks=False)


_SIGNALS = frozenset(int(s) for s in signal.Signals)
_JOIN_CGROUP = ('echo $$ > "$0" || { echo "lm_sandbox: could not join cgroup $0" >&2; '
                'exit 125; }; exec "$@"')


def _remove_cgroup(path: str) -> None:
    """rmdir a per-run cgroup once its tasks are gone (bounded: about 2 s)."""
    for _ in range(200):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _write_identity(root: str) -> str:
    etc = os.path.join(root, "etc")
    os.makedirs(etc)
    with open(os.path.join(etc, "passwd"), "w") as f:
        f.write(f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:{root}/home:/bin/sh\n")
    with open(os.path.join(etc, "group"), "w") as f:
        f.write(f"sandbox:x:{SANDBOX_GID}:\n")
    return etc


# ----------------------------------------------------------------------------- running

def _choose_isolation(network: str, isolation: str) -> str:
    if network not in ("none", "allow"):
        raise ValueError(f"network = {network!r}; expected 'none' or 'allow'")
    if isolation == "unshare":
        raise ValueError("isolation='unshare' was removed (it isolated the network only); "
                         "use the default bubblewrap sandbox, isolation='bwrap'")
    if isolation not in ("auto", *ISOLATIONS):
        raise ValueError(f"isolation = {isolation!r}; expected auto, {', '.join(ISOLATIONS)}")
    mode = "bwrap" if isolation == "auto" else isolation
    if mode == "python_guard" and network == "allow":
        raise ValueError("isolation='python_guard' is a network guard; network='allow' "
                         "contradicts it (use isolation='none')")
    if mode == "none" and network == "none":
        raise ValueError("isolation='none' cannot block the network; pass network='allow' "
                         "(trusted code only) or use the bubblewrap sandbox")
    if mode == "bwrap":
        why = _bwrap_works()
        if why is not None:
            raise SandboxError(f"{why}; untrusted code is not run without the sandbox: "
                               f"{INSTALL_HINT}")
    return mode


def run_in_copy(src_dir: str | None, cmd: Sequence[str], *, limits: Limits = Limits(),
                network: str = "none", isolation: str = "auto",
                env: Mapping[str, str] | None = None, files: Mapping[str, str] | None = None,
                keep: bool = False) -> RunResult:
    """Run `cmd` in a temporary copy of `src_dir` (None: an empty directory) under `limits`.

    `files` = {relative path: text} are written into the copy first (e.g. a generated
    solution). `env` adds variables to the minimal environment (PATH with the interpreter's
    bin first, HOME, TMPDIR, LANG, USER, single-threaded OMP/OpenBLAS/MKL).
    """
    if not cmd:
        raise ValueError("empty command")
    if src_dir is not None and not os.path.isdir(src_dir):
        raise ValueError(f"source directory {src_dir!r} does not exist")
    mode = _choose_isolation(network, isolation)
    limiter = _process_limit_mechanism() if mode == "bwrap" else None
    root = tempfile.mkdtemp(prefix="lm_sandbox_")
    cgroup, drop = None, {}
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
        home, tmp = os.path.join(root, "home"), os.path.join(root, "tmp")
        for d in (home, tmp):
            os.makedirs(d)
        path_env = os.environ.get("PATH", "/usr/bin:/bin")
        child_env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), path_env]),
                     "HOME": home, "TMPDIR": tmp, "LANG": "C.UTF-8", "USER": "sandbox",
                     "LOGNAME": "sandbox", "PYTHONDONTWRITEBYTECODE": "1",
                     "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        child_env.update(env or {})
        popen_env = child_env
        if mode == "bwrap":
            etc = _write_identity(root)
            full_cmd = [*_bwrap_base(network, TMPFS_FILES * limits.file_mb * 2 ** 20),
                        "--ro-bind", os.path.join(etc, "passwd"), "/etc/passwd",
                        "--ro-bind", os.path.join(etc, "group"), "/etc/group",
                        "--bind", work, work, "--bind", home, home, "--bind", tmp, tmp,
                        "--chdir", work, "--clearenv"]
            for k, v in child_env.items():
                full_cmd += ["--setenv", k, v]
            # RLIMIT_NPROC counts the namespace's init too: + 1 leaves `processes` to the command
            nproc = limits.processes + 1 if limiter in ("rlimit", "uid") else 0
            full_cmd += ["--", *_limited(cmd, limits, nproc)]
            if limiter == "cgroup":
                cgroup = os.path.join(_pids_cgroup_parent(), f"lm_sandbox_{uuid.uuid4().hex}")
                os.mkdir(cgroup)
                # + 2: bwrap itself and the namespace's init, which are not the command's
                with open(os.path.join(cgroup, "pids.max"), "w") as f:
                    f.write(str(limits.processes + 2))
                full_cmd = ["/bin/sh", "-c", _JOIN_CGROUP,
                            os.path.join(cgroup, "cgroup.procs"), *full_cmd]
            popen_env = {"PATH": "/usr/bin:/bin"}
            if limiter == "uid":
                _chown_tree(root, FALLBACK_UID, FALLBACK_UID)
                drop = {"user": FALLBACK_UID, "group": FALLBACK_UID, "extra_groups": []}
        else:
            full_cmd = _limited(cmd, limits)
            if mode == "python_guard":
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
            proc = subprocess.Popen(full_cmd, cwd=work, env=popen_env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=err, start_new_session=True, **drop)
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
        if cgroup is not None and proc.returncode == 125 and b"lm_sandbox: could not join" in se:
            raise SandboxError(f"could not put the sandbox into its pids cgroup {cgroup}: "
                               f"{se.decode(errors='replace').strip()[:300]}")
        code = proc.returncode
        if mode == "bwrap" and code > 128 and (code - 128) in _SIGNALS:
            code = 128 - code       # bwrap's init reports a signal death as 128 + signal
        return RunResult(code, _truncate(so, limits.max_output_bytes),
                         _truncate(se, limits.max_output_bytes), timed_out, wall, mode,
                         len(so), len(se), root if keep else None)
    finally:
        if cgroup is not None:
            _remove_cgroup(cgroup)
        if drop and keep:
            _chown_tree(root, os.getuid(), os.getgid())
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


# ----------------------------------------------------------------------------- pytest

_PROGRESS = re.compile(r"^(?P<id>\S.*?) (?P<st>PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)"
                       r"(?: \(.*\))?\s+\[\s*\d+%\]\s*$")
_SUMMARY = re.compile(r"^(?P<st>PASSED|FAILED|ERROR|XFAIL|XPASS) (?P<id>\S.*?)(?: - .*)?$")
_RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


def parse_pytest_log(text: str) -> dict[str, str]:
    """{test id: status} from `pytest -v -rA` output (see the module docstring). For reading
    a log; run_pytest takes its statuses from a result file, never from the output."""
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
    exitstatus: int | None = None     # pytest's exit status, from the result file

    def counts(self) -> dict[str, int]:
        return {s: sum(v == s for v in self.status.values()) for s in STATUSES}


_RESULT_ENV = "LM_SANDBOX_PYTEST_RESULT"
# Run as `python -c _PYTEST_BOOT <pytest args>` inside the sandbox. pytest is imported before
# the project directory goes onto sys.path (a `pytest.py` in the project is not it); the
# statuses are those `pytest -v -rA` reports (parse_pytest_log's rules), collected by an
# in-process plugin and written to the result file only after pytest.main has returned.
_PYTEST_BOOT = r'''
import os, sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
import json
import pytest
name = os.environ.pop("LM_SANDBOX_PYTEST_RESULT")
dirfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
RANK = {"PASSED": 0, "XFAIL": 1, "SKIPPED": 2, "FAILED": 3, "ERROR": 4}


class Results:
    def __init__(self):
        self.status, self.config = {}, None

    def pytest_configure(self, config):
        self.config = config

    def put(self, nodeid, st):
        test_id = self.config.cwd_relative_nodeid(nodeid) if nodeid else ""
        old = self.status.get(test_id)
        if test_id and (old is None or RANK[st] > RANK[old]):
            self.status[test_id] = st

    def pytest_collectreport(self, report):
        if report.failed:
            self.put(report.nodeid, "ERROR")

    def pytest_runtest_logreport(self, report):
        if report.passed:
            st = "PASSED" if report.when == "call" else None
        elif report.failed:
            st = "FAILED" if report.when == "call" else "ERROR"
        else:
            st = "XFAIL" if hasattr(report, "wasxfail") else "SKIPPED"
        if st:
            self.put(report.nodeid, st)


results = Results()
sys.path.insert(0, os.getcwd())
code = int(pytest.main(sys.argv[1:], plugins=[results]))
fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dirfd)
with os.fdopen(fd, "w") as f:
    json.dump({"exitstatus": code, "status": results.status}, f)
sys.exit(code)
'''


def _read_result(work: str, name: str, max_bytes: int) -> dict | None:
    """The result file `name` in the directory `work` (None when absent); SandboxError when
    it is not a regular file, is over max_bytes or does not hold a status map."""
    import json
    import stat
    dfd = os.open(work, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise SandboxError(f"pytest's result file {name} cannot be opened: {e}") from None
    finally:
        os.close(dfd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SandboxError(f"pytest's result file {name} is not a regular file")
        raw = f.read(max_bytes + 1)
    try:
        data = json.loads(raw) if len(raw) <= max_bytes else None
    except ValueError:
        data = None
    ok = (isinstance(data, dict) and isinstance(data.get("exitstatus"), int)
          and isinstance(data.get("status"), dict)
          and all(isinstance(k, str) and v in STATUSES for k, v in data["status"].items()))
    if not ok:
        raise SandboxError(f"pytest's result file {name} does not hold a status map "
                           f"({len(raw)} bytes)")
    return data


def run_pytest(project_dir: str, args: Sequence[str] = (), *, limits: Limits = Limits(),
               python: str = sys.executable, **kw) -> PytestReport:
    """pytest in a sandboxed copy of `project_dir`; the per-test status map.

    Runs `pytest -v -rA -p no:cacheprovider -o addopts= --continue-on-collection-errors
    <args>` through `_PYTEST_BOOT`. The status map is read from a result file that the
    boot script writes into the copy after pytest.main returns, under a random name given
    in its environment (removed from it before pytest starts); never from the output. A
    run that ends without that file (killed, timed out, `os._exit`, pytest missing) is a
    SandboxError, and so is a run whose file holds no statuses unless pytest collected no
    tests (exit 5): never an empty map that could be mistaken for "no tests failed". Code
    running inside the test process shares it with pytest and is not prevented from
    forging results deliberately. `result.stdout` keeps what pytest printed (for messages).
    `kw` goes to run_in_copy.
    """
    name = f".lm_pytest_result_{uuid.uuid4().hex}.json"
    env = {**(kw.pop("env", None) or {}), _RESULT_ENV: name}
    keep = kw.pop("keep", False)
    cmd = [python, "-c", _PYTEST_BOOT, "-v", "-rA", "-p", "no:cacheprovider", "-o", "addopts=",
           "--continue-on-collection-errors", "--color=no", *args]
    # keep everything pytest printed (the log file is bounded by RLIMIT_FSIZE)
    wide = dataclasses.replace(limits, max_output_bytes=max(limits.max_output_bytes,
                                                            limits.file_mb * 2 ** 20))
    result = run_in_copy(project_dir, cmd, limits=wide, env=env, keep=True, **kw)
    try:
        data = _read_result(os.path.join(result.root, "work"), name, limits.file_mb * 2 ** 20)
    finally:
        if not keep:
            shutil.rmtree(result.root, ignore_errors=True)
            result = dataclasses.replace(result, root=None)
    if data is None or (not data["status"] and data["exitstatus"] != 5):
        why = "no result file" if data is None else f"pytest exit status {data['exitstatus']}"
        raise SandboxError(f"pytest produced no test results ({why}; exit {result.returncode}, "
                           f"timed_out={result.timed_out}); stderr: {result.stderr[-500:]}")
    return PytestReport(data["status"], result, data["exitstatus"])
