"""Run untrusted (model-written) code in a throw-away copy of a directory, inside a
bubblewrap sandbox, with limits and no network.

    result = run_in_copy("path/to/project", ["python3", "solution.py"],
                         limits=Limits(wall_s=10, cpu_s=10, memory_mb=1024))
    report = run_pytest("path/to/project", ["tests/test_x.py"])
    report.status   # {"tests/test_x.py::test_a": "PASSED", ...}

The command runs in `<root>/work`, a copy of `src_dir` (symlinks kept as links; FIFOs,
sockets and devices left out), with HOME=`<root>/home`, TMPDIR=`<root>/tmp`; the source is
never touched and `<root>` (a fresh temporary directory) is deleted afterwards unless
`keep=True`, which returns work, home and tmp there as the run left them. stdout and stderr
go to files (bounded by RLIMIT_FSIZE) and come back truncated to `max_output_bytes` each,
head and tail kept.

Isolation modes (`RunResult.isolation` reports the one used):

* ``"bwrap"`` (the default; `isolation="auto"` means this and nothing else): the command runs
  under bubblewrap (`bwrap`, Debian package `bubblewrap`; `.ci/run` installs it) in new
  user, mount, PID, network, IPC, UTS and cgroup namespaces, as uid/gid 1000 with no
  capabilities, no_new_privs, no further user namespaces (`--disable-userns`, so no `setns`
  back into the parent's network namespace) and a seccomp filter (x86_64 and aarch64:
  EPERM for ptrace, process_vm_*, mount and the new mount API, setns/unshare, keyctl, bpf,
  perf_event_open, userfaultfd, io_uring, kernel modules, kexec, reboot, swap, clock
  setting, TIOCSTI, and every non-native syscall ABI). bwrap itself never runs as root: a
  root caller starts it as HOST_UID (a uid that owns nothing), so the sandbox's uid maps to
  HOST_UID on the host, never to 0; a non-root caller's uid is its own (interpreter trees
  HOST_UID cannot reach, e.g. under /root, are bound for it in a private mount namespace
  first). /proc is the
  sandbox's own, with /proc/sys read-only. What it sees: read-only /usr, /bin, /sbin,
  /lib*, /etc/ld.so.cache and /etc/alternatives, the interpreter's `sys.prefix`/
  `sys.base_prefix` trees (bound alone, never their home directory), a synthetic /etc/passwd
  and /etc/group naming only the sandbox user, a minimal read-only /dev, tmpfs /tmp and
  /dev/shm of 4 x `Limits.file_mb` each, and `<root>`: a tmpfs of `Limits.disk_mb` holding
  the copy, HOME and TMPDIR (at the same absolute paths as outside). Not the workspace
  checkout, not /root or /home, not the host's /etc. The network namespace holds only its
  own loopback (`network="allow"` shares the host network, keeping everything else).
  Limits for the whole sandbox: as root with a writable cgroup hierarchy, a pids cgroup
  (`Limits.processes` tasks at once) and a memory cgroup (`Limits.memory_mb`, swap 0,
  shared memory and the tmpfs pages included); otherwise RLIMIT_NPROC (counted per user
  namespace, so per sandbox) and, without a memory cgroup, seccomp also refuses
  memfd_create and SysV shmget so shared memory stays in the bounded tmpfs mounts.
  The sandbox's pid 1 is a small trusted init (not ptrace-able, not killable from inside):
  it unpacks the copy, runs the command, kills every process left when it exits or at the
  wall clock, and for `keep=True` packs work/home/tmp for the caller, who unpacks them
  leaving out special files and links that leave `<root>`, without setuid/setgid bits,
  owned by the caller. When bwrap is missing or does not work here, `SandboxError`
  says how to install it; there is no silent fallback;
* ``"python_guard"`` -- a WEAK mode, only when explicitly asked for: no filesystem, PID or
  process-count isolation at all; a `sitecustomize.py` on PYTHONPATH makes
  `socket.connect`/`connect_ex`/`sendto` raise PermissionError for internet sockets in
  Python processes (C extensions, `_socket`, bash's /dev/tcp and any other program get
  through). Only for trusted code on machines without user namespaces;
* ``"none"`` -- no isolation (trusted code, overhead measurements); needs `network="allow"`.

In every mode the command's own limits are set right before it is exec'd (no `preexec_fn`:
forking a multithreaded parent such as a JAX process is unsafe): RLIMIT_CPU (SIGXCPU, then
SIGKILL), RLIMIT_AS (large allocations fail with MemoryError / ENOMEM), RLIMIT_FSIZE
(largest file written), RLIMIT_CORE = 0; plus the wall clock, after which everything is
killed with SIGKILL. Thread-pool variables (OMP/OpenBLAS/MKL) default to 1 so numeric
libraries stay under the process limit. A signal death comes back as a negative code.

Not guaranteed: kernel bugs (a sandbox shares the host kernel; the seccomp filter is a deny
list); timing side channels; total memory without a memory cgroup (each process is bound by
RLIMIT_AS, so at most `processes` x `memory_mb`); `<root>`'s absolute path is the same inside
as outside; a program that is not under the bound trees (e.g. `python=` a different
interpreter) is not found inside.

`run_pytest` runs pytest in the sandbox and takes the per-test statuses from a result file
its own in-process plugin writes (see run_pytest), with `parse_pytest_log`'s rules: PASSED,
FAILED, SKIPPED, ERROR, XFAIL (XPASS counts as PASSED, as SWE-bench's grading does; a test
that passed but errored in teardown is ERROR; a module that fails to import is one ERROR
entry for the file).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import io
import json
import os
import platform
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence

STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
ISOLATIONS = ("bwrap", "python_guard", "none")
SANDBOX_UID = SANDBOX_GID = 1000
TMPFS_FILES = 4      # /tmp and /dev/shm inside hold at most this many Limits.file_mb each
HOST_UID = 1_879_048_193   # a root caller starts bwrap as this uid (owns nothing on the host)
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install -y bubblewrap`; .ci/run "
                "does this), or pass isolation='python_guard' to accept the weak Python-only "
                "network guard for trusted code")


class SandboxError(RuntimeError):
    """The sandbox could not be set up as asked (e.g. bubblewrap missing or not working)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    wall_s: float = 60.0
    cpu_s: int = 60
    memory_mb: int = 2048    # per process (RLIMIT_AS), and per sandbox where a memory cgroup exists
    file_mb: int = 64
    max_output_bytes: int = 64_000
    processes: int = 64      # tasks (processes + threads) at once in the sandbox (bwrap mode)
    disk_mb: int = 1024      # the copy + HOME + TMPDIR together (bwrap mode: their tmpfs)

    def __post_init__(self):
        for name in ("wall_s", "cpu_s", "memory_mb", "file_mb", "max_output_bytes",
                     "processes", "disk_mb"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} = {getattr(self, name)} must be > 0")


@dataclasses.dataclass
class RunResult:
    returncode: int          # negative: killed by that signal
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


_GUARD = """"\""Installed by lib/sandbox.py: internet sockets may not connect."\""
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


def _check_files(src_dir: str | None, files: Mapping[str, str]) -> None:
    """ValueError unless every `files` path stays inside the copy without passing through a
    symbolic link (or onto a directory) of `src_dir`."""
    for rel in files:
        parts = os.path.normpath(rel).split(os.sep)
        if os.path.isabs(rel) or not rel or parts[0] in ("..", "."):
            raise ValueError(f"file {rel!r} would be written outside the sandbox")
        if src_dir is None:
            continue
        here = os.path.realpath(src_dir)
        for i, part in enumerate(parts):
            here = os.path.join(here, part)
            try:
                st = os.lstat(here)
            except FileNotFoundError:
                break
            if stat.S_ISLNK(st.st_mode):
                raise ValueError(f"file {rel!r} goes through the symbolic link "
                                 f"{'/'.join(parts[:i + 1])!r} in the source; refused")
            if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode) or \
                    i == len(parts) - 1 and not stat.S_ISREG(st.st_mode):
                raise ValueError(f"file {rel!r}: {'/'.join(parts[:i + 1])!r} in the source "
                                 "is not a regular file or directory where one is needed")


def _write_files_on_host(work: str, files: Mapping[str, str]) -> None:
    """Write `files` into a host-side copy (modes without bwrap); never through a link."""
    for rel, text in files.items():
        path = os.path.join(work, os.path.normpath(rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as f:
            f.write(text)


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


# parts of /proc that container runtimes hide: host-wide state a sandbox has no use for
_PROC_MASKED = ("/proc/timer_list", "/proc/sched_debug", "/proc/keys", "/proc/latency_stats",
                "/proc/kcore", "/proc/kallsyms")
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
                   "/proc/acpi", "/proc/scsi")


@functools.cache
def _system_view() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """bwrap arguments for the read-only system view and /proc (module docstring), and the
    host directories they cover."""
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
    for p in _PROC_READ_ONLY:
        args += ["--ro-bind-try", p, p]
    for p in _PROC_MASKED:
        if os.path.exists(p):
            args += ["--ro-bind", "/dev/null", p]
    return tuple(args), tuple(covered)


def _reachable_by_others(path: str) -> bool:
    """Whether a uid that owns nothing can reach `path` (o+x on every parent, o+rx on it)."""
    path = os.path.abspath(path)
    try:
        if os.stat(path).st_mode & 0o005 != 0o005:
            return False
        while os.path.dirname(path) != path:
            path = os.path.dirname(path)
            if not os.stat(path).st_mode & 0o001:
                return False
    except OSError:
        return False
    return True


@functools.cache
def _python_binds(covered: tuple[str, ...]) -> tuple[str, ...]:
    """The interpreter trees not already under `covered`."""
    out: list[str] = []
    done = list(covered)
    for tree in _python_trees():
        real = os.path.realpath(tree)
        if not any(real == c or real.startswith(c + "/") for c in done):
            out.append(tree)
            done.append(real)
    return tuple(out)


@functools.cache
def _cgroup_parent(controller: str) -> str | None:
    """A cgroup directory (v1 hierarchy of `controller`, or v2 with it enabled) under which
    this root process may create per-run cgroups limiting "pids" or "memory", else None.
    This process's own cgroup is tried first (a run then stays under its limits)."""
    if os.geteuid() != 0:
        return None
    probe_file = {"pids": ("pids.max",), "memory": ("memory.max", "memory.limit_in_bytes")}
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split() for line in f]
        with open("/proc/self/cgroup") as f:
            own = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError:
        return None
    candidates = []
    for m in mounts:
        if m[2] == "cgroup" and controller in m[3].split(","):
            paths = [p for _, ctl, p in own if controller in ctl.split(",")]
        elif m[2] == "cgroup2":
            paths = [p for hid, ctl, p in own if hid == "0" and ctl == ""]
        else:
            continue
        candidates += [os.path.join(m[1], p.lstrip("/")) for p in paths] + [m[1]]
    for parent in dict.fromkeys(candidates):
        probe = os.path.join(parent, f"sandbox_probe_{uuid.uuid4().hex[:12]}")
        try:
            os.mkdir(probe)
        except OSError:
            continue
        try:
            ok = any(os.path.exists(os.path.join(probe, n)) for n in probe_file[controller])
        finally:
            os.rmdir(probe)
        if ok:
            return parent
    return None


def _process_limit_mechanism() -> str:
    """"cgroup" (root with a pids cgroup) or "rlimit" (RLIMIT_NPROC, per user namespace)."""
    return "cgroup" if _cgroup_parent("pids") is not None else "rlimit"


def _memory_limit_mechanism() -> str:
    """"cgroup" (one memory limit for the whole sandbox, shared memory included) or
    "rlimit" (RLIMIT_AS per process; memfd_create and shmget refused)."""
    return "cgroup" if _cgroup_parent("memory") is not None else "rlimit"


def _make_cgroups(limits: Limits) -> list[str]:
    """Per-run pids and memory cgroups (those this process can create), limits written."""
    made: list[str] = []
    try:
        for controller in ("pids", "memory"):
            parent = _cgroup_parent(controller)
            if parent is None or (made and os.path.dirname(made[-1]) == parent):
                continue           # v2: one cgroup holds both controllers
            path = os.path.join(parent, f"sandbox_{uuid.uuid4().hex}")
            os.mkdir(path)
            made.append(path)
        mem = str(int(limits.memory_mb) * 2 ** 20)
        writes = [("pids.max", str(limits.processes + 2)),   # + bwrap and the sandbox's init
                  ("memory.max", mem), ("memory.swap.max", "0"),
                  ("memory.limit_in_bytes", mem), ("memory.memsw.limit_in_bytes", mem)]
        for path in made:
            for name, value in writes:
                if os.path.exists(os.path.join(path, name)):
                    with open(os.path.join(path, name), "w") as f:
                        f.write(value)
    except OSError as e:
        for path in made:
            _remove_cgroup(path)
        raise SandboxError(f"could not set up the sandbox's cgroups: {e}") from None
    return made


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


# seccomp: syscalls refused with EPERM, by architecture (audit arch, x32 bit, numbers)
_DENIED = ("ptrace process_vm_readv process_vm_writev kexec_load kexec_file_load init_module "
           "finit_module delete_module bpf perf_event_open userfaultfd keyctl add_key "
           "request_key mount umount2 pivot_root swapon swapoff reboot syslog acct "
           "settimeofday clock_settime clock_adjtime adjtimex iopl ioperm open_by_handle_at "
           "name_to_handle_at lookup_dcookie quotactl quotactl_fd unshare setns vhangup "
           "io_uring_setup io_uring_enter io_uring_register open_tree move_mount fsopen "
           "fsconfig fsmount fspick mount_setattr kcmp pidfd_getfd nfsservctl uselib _sysctl "
           "fanotify_init").split()
_SHM = ("memfd_create", "shmget")
_SYSCALLS = {
    "x86_64": (0xC000003E, True, dict(zip(
        _DENIED + list(_SHM) + ["ioctl"],
        [101, 310, 311, 246, 320, 175, 313, 176, 321, 298, 323, 250, 248, 249, 165, 166, 155,
         167, 168, 169, 103, 163, 164, 227, 305, 159, 172, 173, 304, 303, 212, 179, 443, 272,
         308, 153, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 312, 438, 180, 134, 156,
         300, 319, 29, 16]))),
    "aarch64": (0xC00000B7, False, dict(zip(
        [n for n in _DENIED if n not in ("iopl", "ioperm", "uselib", "_sysctl")]
        + list(_SHM) + ["ioctl"],
        [117, 270, 271, 104, 294, 105, 273, 106, 280, 241, 282, 219, 217, 218, 40, 39, 41,
         224, 225, 142, 116, 89, 170, 112, 266, 171, 265, 264, 18, 60, 443, 97, 268, 58,
         425, 426, 427, 428, 429, 430, 431, 432, 433, 442, 272, 438, 42, 262, 279, 194,
         29]))),
}
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C


@functools.cache
def _seccomp_program(deny_shm: bool) -> bytes | None:
    """A classic-BPF seccomp program (bwrap --seccomp) that answers EPERM to the `_DENIED`
    syscalls (and memfd_create/shmget when `deny_shm`), to ioctl TIOCSTI/TIOCLINUX and to any
    non-native ABI; None on an architecture without a table here."""
    arch = _SYSCALLS.get(platform.machine())
    if arch is None:
        return None
    audit, x32, numbers = arch
    deny = [numbers[n] for n in _DENIED + list(_SHM if deny_shm else ()) if n in numbers]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, eperm = 0x7FFF0000, 0x00050000 | 1
    prog: list[tuple[int, int, int, int]] = [(ld, 0, 0, 4)]     # seccomp_data.arch
    body: list[tuple[int, int, int, int]] = [(ld, 0, 0, 0)]     # seccomp_data.nr
    if x32:
        body.append(("JGE_DENY", 0, 0, 0x40000000))
    body += [("JEQ_DENY", 0, 0, nr) for nr in deny]
    # ioctl: refuse the two requests that push input into a terminal
    body += [(jeq, 0, 4, numbers["ioctl"]), (ld, 0, 0, 24),     # args[1], low 32 bits
             ("JEQ_DENY", 0, 0, _TIOCSTI), ("JEQ_DENY", 0, 0, _TIOCLINUX),
             (ret, 0, 0, allow), (ret, 0, 0, allow)]
    prog.append(("JNE_DENY", 0, 0, audit))
    prog += body
    deny_at = len(prog)
    out = []
    for i, (code, jt, jf, k) in enumerate(prog):
        to_deny = deny_at - i - 1
        if code == "JNE_DENY":
            code, jt, jf = jeq, 0, to_deny
        elif code == "JEQ_DENY":
            code, jt, jf = jeq, to_deny, 0
        elif code == "JGE_DENY":
            code, jt, jf = jge, to_deny, 0
        if max(jt, jf) > 255:
            raise AssertionError("seccomp program too long for 8-bit jumps")
        out.append(struct.pack("=HBBI", code, jt, jf, k))
    out.append(struct.pack("=HBBI", ret, 0, 0, eperm))
    return b"".join(out)


# Run as root, once per sandbox: join the run's cgroups, bind interpreter trees that HOST_UID
# cannot reach onto directories it can (in a private mount namespace), drop to HOST_UID, exec
# bwrap. argv: json config, then the bwrap command.
_ENTER = r'''
import json, os, sys
cfg = json.loads(sys.argv[1])
def fail(msg):
    os.write(2, ("lib/sandbox: " + msg + "\n").encode())
    os._exit(125)
for cg in cfg["cgroups"]:
    try:
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    except OSError as e:
        fail(f"could not join cgroup {cg}: {e}")
if cfg["binds"]:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def call(rc, what):
        if rc != 0:
            fail(f"{what}: {os.strerror(ctypes.get_errno())}")
    call(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
    call(libc.mount(b"none", b"/", None, 0x40000 | 0x4000, None), "making / private")
    for src, dst in cfg["binds"]:
        call(libc.mount(src.encode(), dst.encode(), None, 0x1000 | 0x4000, None),
             f"binding {src}")
uid = cfg["uid"]
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
os.execv(sys.argv[2], sys.argv[2:])
'''

# The sandbox's pid 1 (bwrap --as-pid-1), trusted: unpacks the copy from fd `source` into
# <root>/work, runs the command under its rlimits, reaps, kills all that is left when the
# command exits or at the wall clock, then writes one JSON status line to fd `result`,
# followed for keep=True by a tar of work, home and tmp. argv: json config, then the command.
_INIT = r'''
import ctypes, json, os, resource, signal, stat, sys, tarfile, time
cfg = json.loads(sys.argv[1])
cmd, root = sys.argv[2:], cfg["root"]
libc = ctypes.CDLL(None)
libc.prctl(4, 0, 0, 0, 0)                        # PR_SET_DUMPABLE 0: /proc/1 stays closed
keep_fds = {0, 1, 2, cfg["source"], cfg["result"]}
for name in os.listdir("/proc/self/fd"):
    if int(name) not in keep_fds:
        try:
            os.close(int(name))
        except OSError:
            pass
out = os.fdopen(cfg["result"], "wb")
def finish(status):
    out.write((json.dumps(status) + "\n").encode())
    out.flush()
trust = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
try:
    for d in ("work", "home", "tmp"):
        os.mkdir(os.path.join(root, d))
    with os.fdopen(cfg["source"], "rb") as f, tarfile.open(fileobj=f, mode="r|") as t:
        t.extractall(os.path.join(root, "work"), **trust)
except Exception as e:
    finish({"error": f"could not unpack the copy into the sandbox: {type(e).__name__}: {e}"})
    sys.exit(0)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
pid = os.fork()
if pid == 0:
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
        os.closerange(3, 1 << 16)
        libc.prctl(4, 1, 0, 0, 0)                    # the command's own /proc/self is its own
        os.setsid()
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")                          # the command goes first, never pid 1
        cpu, mem, size, nproc = cfg["cpu"], cfg["mem"], cfg["fsize"], cfg["nproc"]
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.chdir(os.path.join(root, "work"))
        os.execvp(cmd[0], cmd)
    except BaseException as e:
        os.write(2, f"lib/sandbox: cannot run {cmd[0]!r}: {e}\n".encode())
    os._exit(127)
deadline, status, timed_out = time.monotonic() + cfg["wall"], None, False
while status is None:
    while True:
        try:
            p, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            p = 0
        if p == 0:
            break
        if p == pid:
            status = st
    left = deadline - time.monotonic()
    if status is None and left <= 0:
        timed_out = True
        break
    if status is None:
        signal.sigtimedwait([signal.SIGCHLD], min(left, 1.0))
try:
    os.kill(-1, signal.SIGKILL)                      # everything else in the sandbox
except ProcessLookupError:
    pass
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
code = -signal.SIGKILL if timed_out else os.waitstatus_to_exitcode(status)
finish({"code": code, "timed_out": timed_out})
if cfg["keep"]:
    with tarfile.open(fileobj=out, mode="w|") as t:
        for top in ("work", "home", "tmp"):
            for base, dirs, names in os.walk(os.path.join(root, top)):
                for d in dirs:                           # owner-searchable, links left alone
                    try:
                        mode = os.lstat(os.path.join(base, d)).st_mode
                        if stat.S_ISDIR(mode):
                            os.chmod(os.path.join(base, d), 0o700 | mode & 0o7777)
                    except OSError:
                        pass
                for name in [""] + dirs + names:
                    path = os.path.join(base, name) if name else base
                    try:
                        info = t.gettarinfo(path, os.path.relpath(path, root))
                        if info is None or not (info.isreg() or info.isdir()
                                                or info.issym() or info.islnk()):
                            continue
                        if info.isreg():
                            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
                            with os.fdopen(fd, "rb") as f:
                                t.addfile(info, f)
                        else:
                            t.addfile(info)
                    except OSError:
                        pass
out.close()
'''


def _bwrap_args(network: str, limits: Limits, root: str, trees: Sequence[tuple[str, str]],
                fds: dict[str, int]) -> list[str]:
    """bwrap's arguments (passed through --args, never on a command line): namespaces,
    identity, seccomp, the read-only view, /dev, the tmpfs mounts and the environment."""
    system, _ = _system_view()
    tmpfs = str(TMPFS_FILES * limits.file_mb * 2 ** 20)
    args = ["--unshare-all", "--unshare-user", *(["--share-net"] if network == "allow" else []),
            "--disable-userns", "--die-with-parent", "--new-session", "--as-pid-1",
            "--cap-drop", "ALL", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID),
            "--hostname", "sandbox", *system,
            "--dev", "/dev", "--perms", "1777", "--size", tmpfs, "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev", "--perms", "1777", "--size", tmpfs, "--tmpfs", "/tmp"]
    for src, dst in trees:                   # after /tmp: a CI venv lives under /tmp
        args += ["--ro-bind", src, dst]
    args += ["--perms", "0444", "--ro-bind-data", str(fds["passwd"]), "/etc/passwd",
             "--perms", "0444", "--ro-bind-data", str(fds["group"]), "/etc/group",
             "--perms", "0700", "--size", str(int(limits.disk_mb) * 2 ** 20), "--tmpfs", root,
             "--chdir", root]
    if "seccomp" in fds:
        args += ["--seccomp", str(fds["seccomp"])]
    return args


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _source_tar(src_dir: str | None, files: Mapping[str, str], path: str) -> int:
    """Write the copy's content (src_dir, then `files`) as a tar at `path`; its size."""
    def only_plain(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return info if (info.isreg() or info.isdir() or info.issym() or info.islnk()) else None
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        if src_dir is not None:
            for name in sorted(os.listdir(src_dir)):
                t.add(os.path.join(src_dir, name), name, filter=only_plain)
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(os.path.normpath(rel))
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            t.addfile(info, io.BytesIO(data))
    return os.path.getsize(path)


def _kept_member(member: tarfile.TarInfo, root: str) -> tarfile.TarInfo | None:
    """`member` of the init's tar as the caller may unpack it into `root` (None: left out):
    a file, directory or link under work/, home/ or tmp/ whose path and link target stay in
    `root` (resolving links already unpacked), without setuid/setgid/sticky or group/other
    write bits, owned by the caller."""
    top = os.path.realpath(root)
    if os.path.isabs(member.name) or member.name.split("/", 1)[0] not in ("work", "home", "tmp"):
        return None
    if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        return None
    dest = os.path.realpath(os.path.join(top, member.name))
    if os.path.commonpath([top, dest]) != top or dest == top:
        return None
    if member.issym() or member.islnk():
        if os.path.isabs(member.linkname):
            return None
        base = os.path.dirname(dest) if member.issym() else top
        target = os.path.realpath(os.path.join(base, member.linkname))
        if os.path.commonpath([top, target]) != top:
            return None
    member = copy.copy(member)
    member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
    if not member.issym():
        member.mode = member.mode & 0o755 | (0o700 if member.isdir() else 0o600)
    return member


def _unpack_kept(stream, root: str) -> None:
    """Unpack the init's tar of work/home/tmp into `root`, member by member through
    `_kept_member` (what it refuses is left out)."""
    trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
    with tarfile.open(fileobj=stream, mode="r|") as t:
        t.extractall(root, members=(m for m in map(lambda m: _kept_member(m, root), t)
                                    if m is not None), **trusted)


def _run_bwrap(src_dir: str | None, cmd: Sequence[str], limits: Limits, network: str,
               env: Mapping[str, str], files: Mapping[str, str], keep: bool) -> RunResult:
    """The bwrap mode of run_in_copy (module docstring)."""
    exe = shutil.which("bwrap")
    if exe is None:
        raise SandboxError(f"bubblewrap (`bwrap`) is not on PATH: {INSTALL_HINT}")
    root = tempfile.mkdtemp(prefix="sandbox_")
    as_root = os.geteuid() == 0
    cgroups: list[str] = []
    fds: dict[str, int] = {}
    proc, returned = None, False
    try:
        size = _source_tar(src_dir, files, os.path.join(root, "source.tar"))
        if size > limits.disk_mb * 2 ** 20:
            raise ValueError(f"the source ({size / 2 ** 20:.0f} MiB as a tar) does not fit "
                             f"Limits.disk_mb = {limits.disk_mb}")
        home, tmp = os.path.join(root, "home"), os.path.join(root, "tmp")
        child_env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable),
                                              os.environ.get("PATH", "/usr/bin:/bin")]),
                     "HOME": home, "TMPDIR": tmp, "LANG": "C.UTF-8", "USER": "sandbox",
                     "LOGNAME": "sandbox", "PYTHONDONTWRITEBYTECODE": "1",
                     "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     **env}
        # interpreter trees HOST_UID cannot reach are bound, by the root-side _ENTER, onto
        # directories under <root> that it can
        _, covered = _system_view()
        trees, binds = [], []
        for i, tree in enumerate(_python_binds(covered)):
            if as_root and not _reachable_by_others(tree):
                stage = os.path.join(root, "trees", str(i))
                os.makedirs(stage, mode=0o755)
                os.chmod(os.path.dirname(stage), 0o755)
                binds.append((tree, stage))
                trees.append((stage, tree))
            else:
                trees.append((tree, tree))
        if binds:
            os.chmod(root, 0o711)
            if not _reachable_by_others(os.path.join(root, "trees")):
                raise SandboxError(f"the sandbox directory {root} is not reachable by other "
                                   "users (set TMPDIR to a directory under /tmp)")
        mem = _memory_limit_mechanism() if as_root else "rlimit"
        fds["source"] = os.open(os.path.join(root, "source.tar"), os.O_RDONLY)
        fds["result"] = os.open(os.path.join(root, "result"),
                                os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        fds["passwd"] = _memfd("passwd", f"sandbox:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:"
                                         f"{home}:/bin/sh\n".encode())
        fds["group"] = _memfd("group", f"sandbox:x:{SANDBOX_GID}:\n".encode())
        program = _seccomp_program(mem != "cgroup")
        if program is not None:
            fds["seccomp"] = _memfd("seccomp", program)
        args = _bwrap_args(network, limits, root, trees, fds) + ["--clearenv"]
        for k, v in child_env.items():
            args += ["--setenv", k, v]
        fds["args"] = _memfd("args", b"".join(a.encode() + b"\0" for a in args))
        nproc = limits.processes + 1 if _process_limit_mechanism() == "rlimit" else 0
        init_cfg = {"root": root, "source": fds["source"], "result": fds["result"],
                    "wall": float(limits.wall_s), "keep": bool(keep), "cpu": int(limits.cpu_s),
                    "mem": int(limits.memory_mb) * 2 ** 20,
                    "fsize": int(limits.file_mb) * 2 ** 20, "nproc": nproc}
        full_cmd = [exe, "--args", str(fds["args"]), "--", sys.executable, "-S", "-I", "-c",
                    _INIT, json.dumps(init_cfg), *cmd]
        if as_root:
            cgroups = _make_cgroups(limits)
            enter = {"uid": HOST_UID, "cgroups": cgroups, "binds": binds}
            full_cmd = [sys.executable, "-S", "-I", "-c", _ENTER, json.dumps(enter), *full_cmd]
        out_path, err_path = os.path.join(root, "stdout"), os.path.join(root, "stderr")
        t0 = time.perf_counter()
        backstop = limits.wall_s + 10 + (limits.disk_mb / 100 if keep else 0)
        timed_out = False
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(full_cmd, cwd="/", env={"PATH": "/usr/bin:/bin"},
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True, pass_fds=tuple(fds.values()))
            for name in ("args", "passwd", "group", "seccomp", "source"):
                if name in fds:
                    os.close(fds.pop(name))
            try:
                proc.wait(timeout=backstop)
            except subprocess.TimeoutExpired:
                timed_out = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        for path in cgroups:
            _remove_cgroup(path)
        cgroups = []
        wall = time.perf_counter() - t0
        with open(out_path, "rb") as f:
            so = f.read()
        with open(err_path, "rb") as f:
            se = f.read()
        if proc.returncode == 125 and b"lib/sandbox: " in se:
            raise SandboxError(f"could not start the sandbox: "
                               f"{se.decode(errors='replace').strip()[-300:]}")
        result = os.fdopen(fds.pop("result"), "rb")
        with result:
            result.seek(0)
            try:
                status = json.loads(result.readline(65536))
            except ValueError:
                status = None
            if isinstance(status, dict) and "error" in status:
                raise SandboxError(str(status["error"])[:500])
            reported = isinstance(status, dict) and isinstance(status.get("code"), int)
            if keep and not reported:
                raise SandboxError(f"the sandbox's init did not report (bwrap exit "
                                   f"{proc.returncode}, killed at the backstop: {timed_out}); "
                                   "the copy is lost")
            if keep:
                try:
                    _unpack_kept(result, root)
                except (tarfile.TarError, OSError) as e:
                    raise SandboxError(f"the copy came back incomplete: {e}") from None
        if reported:
            code, timed_out = status["code"], timed_out or bool(status.get("timed_out"))
        else:                  # the init did not report (the backstop, or it was killed)
            code = proc.returncode
            if code > 128 and (code - 128) in _SIGNALS:
                code = 128 - code
            if not timed_out and code == 0:
                code = -signal.SIGKILL
        if keep:
            for d in ("work", "home", "tmp"):
                os.makedirs(os.path.join(root, d), exist_ok=True)
            for name in ("source.tar", "result"):
                os.unlink(os.path.join(root, name))
            if binds:
                shutil.rmtree(os.path.join(root, "trees"), ignore_errors=True)
                os.chmod(root, 0o700)
        returned = True
        return RunResult(code, _truncate(so, limits.max_output_bytes),
                         _truncate(se, limits.max_output_bytes), timed_out, wall, "bwrap",
                         len(so), len(se), root if keep else None)
    finally:
        for fd in fds.values():
            os.close(fd)
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for path in cgroups:
            _remove_cgroup(path)
        if not (keep and returned):
            shutil.rmtree(root, ignore_errors=True)


@functools.cache
def _bwrap_works() -> str | None:
    """None when a minimal bwrap sandbox runs `true` here, else why not."""
    try:
        r = _run_bwrap(None, ["true"], Limits(wall_s=30, cpu_s=10, memory_mb=256,
                                               disk_mb=4), "none", {}, {}, False)
    except SandboxError as e:
        return str(e)
    except OSError as e:
        return f"bwrap could not start: {e}"
    if r.returncode != 0:
        hint = (f"; bwrap runs as uid {HOST_UID}: are the interpreter's files readable by "
                "other users, and may unprivileged users create user namespaces here?"
                if os.geteuid() == 0 else "")
        return f"bwrap does not work here (exit {r.returncode}: {r.stderr.strip()[:300]}{hint})"
    return None


def bwrap_available() -> bool:
    """Whether the default (bubblewrap) sandbox works on this machine."""
    return _bwrap_works() is None


_SIGNALS = frozenset(int(s) for s in signal.Signals)


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
    solution); a path through a symbolic link of the source is refused. `env` adds
    variables to the minimal environment (PATH with the interpreter's bin first, HOME,
    TMPDIR, LANG, USER, single-threaded OMP/OpenBLAS/MKL).
    """
    if not cmd:
        raise ValueError("empty command")
    if src_dir is not None and not os.path.isdir(src_dir):
        raise ValueError(f"source directory {src_dir!r} does not exist")
    files = dict(files or {})
    _check_files(src_dir, files)
    mode = _choose_isolation(network, isolation)
    if mode == "bwrap":
        return _run_bwrap(src_dir, cmd, limits, network, env or {}, files, keep)
    root = tempfile.mkdtemp(prefix="sandbox_")
    try:
        work = os.path.join(root, "work")
        if src_dir is None:
            os.makedirs(work)
        else:
            shutil.copytree(src_dir, work, symlinks=True)
        _write_files_on_host(work, files)
        home, tmp = os.path.join(root, "home"), os.path.join(root, "tmp")
        for d in (home, tmp):
            os.makedirs(d)
        path_env = os.environ.get("PATH", "/usr/bin:/bin")
        child_env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), path_env]),
                     "HOME": home, "TMPDIR": tmp, "LANG": "C.UTF-8", "USER": "sandbox",
                     "LOGNAME": "sandbox", "PYTHONDONTWRITEBYTECODE": "1",
                     "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        child_env.update(env or {})
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
