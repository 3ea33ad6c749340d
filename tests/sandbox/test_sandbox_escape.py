"""Escapes from the default (bubblewrap) sandbox that must fail: writing or reading outside the
copy, the network (plain, bash /dev/tcp, setns into the parent's namespace), forking past the
process limit, outliving the wall clock, an 8 GB allocation, an endless loop, running as root.
Each runs model-like code through `run_in_copy` and asserts the escape did not happen."""
import os
import socket
import sys
import threading
import time

import pytest

from lib import sandbox as sb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAST = sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024)


def _py(code, limits=FAST, **kw):
    return sb.run_in_copy(None, [sys.executable, "-c", code], limits=limits, **kw)


@pytest.fixture
def listener():
    """A 127.0.0.1 listener in this (the parent's) network namespace; records accepts."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    accepted, stop = [], threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                accepted.append(conn)
            except OSError:
                pass
    t = threading.Thread(target=loop, daemon=True)
    t.start()
    yield srv.getsockname()[1], accepted
    stop.set()
    t.join(timeout=5)
    srv.close()


def test_write_outside_the_copy_fails(tmp_path):
    sentinel = tmp_path / "sentinel.txt"
    r = _py(f"open({str(sentinel)!r}, 'w').write('escaped')\n")
    assert r.returncode != 0 and not sentinel.exists(), (r.stdout, r.stderr)
    r = _py("open('/usr/escaped.txt', 'w').write('x')\n")       # the system view is read-only
    assert r.returncode != 0 and not os.path.exists("/usr/escaped.txt")


def test_files_outside_the_copy_are_not_readable(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-7f3a")
    probe = ("import sys\nfor p in sys.argv[1:]:\n    try:\n        print(open(p).read())\n"
             "    except OSError as e:\n        print('DENIED', p, type(e).__name__)\n")
    targets = [str(secret), "/etc/passwd", os.path.join(REPO, "WORKSPACE.md"),
               os.path.join(REPO, "lib", "lm", "sandbox.py")]
    r = sb.run_in_copy(None, [sys.executable, "-c", probe, *targets], limits=FAST)
    assert r.ok, r.stderr
    assert "TOP-SECRET-7f3a" not in r.stdout
    assert "root:" not in r.stdout                      # the host's passwd is not visible
    assert r.stdout.count("DENIED") == 3, r.stdout      # secret, WORKSPACE.md, sandbox.py
    r = _py("import os\nprint(sorted(os.listdir('/')), os.path.exists('/work'),"
            " os.path.exists('/home'), sorted(os.listdir('/root')) if os.path.isdir('/root')"
            " else None)")
    assert r.ok and "'work'" not in r.stdout and "'home'" not in r.stdout, r.stdout
    assert ".bashrc" not in r.stdout


SETNS = """
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
try:
    fd = os.open('/proc/{pid}/ns/net', os.O_RDONLY)
except OSError as e:
    print('NO-NS-FILE', type(e).__name__)
    fd = None
if fd is not None:
    if libc.setns(fd, 0x40000000) != 0:
        print('SETNS-FAILED', os.strerror(ctypes.get_errno()))
    else:
        print('SETNS-OK')
s = socket.socket()
s.settimeout(3)
try:
    s.connect(('127.0.0.1', {port}))
    print('CONNECTED')
except OSError as e:
    print('REFUSED', type(e).__name__)
"""


def test_setns_into_the_parent_network_namespace_fails(listener):
    port, accepted = listener
    r = _py(SETNS.format(pid=os.getpid(), port=port))
    assert "SETNS-OK" not in r.stdout and "CONNECTED" not in r.stdout, (r.stdout, r.stderr)
    assert "REFUSED" in r.stdout
    time.sleep(0.3)
    assert accepted == []


def test_plain_connect_and_bash_dev_tcp_fail(listener):
    port, accepted = listener
    r = _py("import _socket\ns = _socket.socket()\ns.settimeout(3)\n"
            f"try:\n    s.connect(('127.0.0.1', {port}))\n    print('CONNECTED')\n"
            "except OSError as e:\n    print('REFUSED', e)\n")
    assert "REFUSED" in r.stdout and "CONNECTED" not in r.stdout, (r.stdout, r.stderr)
    r = sb.run_in_copy(None, ["bash", "-c", f"echo hi > /dev/tcp/127.0.0.1/{port} && echo SENT"],
                       limits=FAST)
    assert r.returncode != 0 and "SENT" not in r.stdout, (r.stdout, r.stderr)
    time.sleep(0.3)
    assert accepted == []
    allowed = _py(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 3)\n"
                  "print('CONNECTED')\n", network="allow")
    assert "CONNECTED" in allowed.stdout, allowed.stderr   # the listener was reachable


FORK = """
import os, time
n = 0
for _ in range({tries}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    n += 1
print('FORKED', n, flush=True)
os.killpg(0, 9)
"""


def test_forking_past_the_process_limit_fails():
    limits = sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024, processes=12)
    r = _py(FORK.format(tries=200), limits=limits)
    forked = [int(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("FORKED")]
    # the command itself is one of the `processes` tasks; its children are the rest
    assert forked == [limits.processes - 1], (r.stdout, r.stderr)


OTHER_CALLER = """
import sys
sys.path.insert(0, {repo!r})
from lib import sandbox as sb
if {no_cgroup}:
    sb._cgroup_parent = lambda controller: None
limits = sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024, processes=12)
r = sb.run_in_copy(None, [sys.executable, "-c", {fork!r}], limits=limits, keep=True)
import os
owner = os.stat(r.root + "/work").st_uid == os.getuid()
import shutil; shutil.rmtree(r.root)
print(sb._process_limit_mechanism(), r.isolation, r.stdout.strip(), owner, r.stderr[-300:])
"""


def _searchable_by_others(path: str) -> bool:
    """Whether a uid that owns nothing here can reach `path` (o+r on it, o+x on it and every
    parent): Python skips an unreachable sys.path entry silently, so this is checked first."""
    path = os.path.abspath(path)
    if not os.stat(path).st_mode & 0o004:
        return False
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        if os.path.dirname(path) == path:
            return True
        path = os.path.dirname(path)


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                    reason="needs root to start other callers, and a system python3")
@pytest.mark.parametrize("caller", ["non-root", "root without cgroups"])
def test_forking_past_the_process_limit_fails_for_other_callers(caller):
    """A non-root caller gets RLIMIT_NPROC (per user namespace) instead of a cgroup; so does
    root without a writable cgroup hierarchy (its bwrap runs as HOST_UID either way). The
    copy comes back owned by the caller."""
    import subprocess
    non_root = caller == "non-root"
    if non_root and not _searchable_by_others(REPO):
        pytest.skip(f"the checkout {REPO} is not readable by another uid here (e.g. a mktemp -d folder)")
    code = OTHER_CALLER.format(repo=REPO, fork=FORK.format(tries=200), no_cgroup=not non_root)
    drop = {"user": 54321, "group": 54321, "extra_groups": []} if non_root else {}
    r = subprocess.run(["/usr/bin/python3", "-c", code], cwd="/", capture_output=True,
                       text=True, timeout=120, env={"PATH": "/usr/bin:/bin"}, **drop)
    if non_root and "Permission denied" in r.stderr:
        pytest.skip("the checkout is not readable by another uid here")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:5] == ["rlimit", "bwrap", "FORKED", "11", "True"], r.stdout


def test_setsid_child_dies_at_the_wall_clock_limit():
    code = ("setsid sh -c 'sleep 2; echo late > late_timeout.txt' </dev/null >/dev/null 2>&1 &"
            " sleep 60")
    r = sb.run_in_copy(None, ["bash", "-c", code], limits=sb.Limits(wall_s=1.0), keep=True)
    try:
        assert r.timed_out
        time.sleep(r.wall_s + 3)            # past the moment the child would write
        assert not os.path.exists(os.path.join(r.root, "work", "late_timeout.txt"))
    finally:
        import shutil
        shutil.rmtree(r.root, ignore_errors=True)


def test_background_child_dies_when_the_command_exits():
    code = "setsid sh -c 'sleep 1; echo late > late_exit.txt' </dev/null >/dev/null 2>&1 & exit 0"
    r = sb.run_in_copy(None, ["bash", "-c", code], limits=FAST, keep=True)
    try:
        assert r.ok
        time.sleep(3)
        assert not os.path.exists(os.path.join(r.root, "work", "late_exit.txt"))
    finally:
        import shutil
        shutil.rmtree(r.root, ignore_errors=True)


def test_ram_backed_tmp_is_bounded_and_dev_is_read_only():
    limits = sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024, file_mb=1)
    cap = sb.TMPFS_FILES * limits.file_mb * 2 ** 20
    code = ("import sys\nfor d in ('/tmp', '/dev/shm'):\n    n = 0\n    try:\n"
            "        for i in range(64):\n"
            "            open(f'{d}/fill{i}', 'wb').write(b'x' * 2 ** 19)\n"
            "            n += 2 ** 19\n    except OSError as e:\n        pass\n"
            "    print(d, n)\n"
            "try:\n    open('/dev/escape', 'w')\n    print('DEV-WRITABLE')\n"
            "except OSError:\n    print('DEV-RO')\n")
    r = _py(code, limits=limits)
    sizes = {line.split()[0]: int(line.split()[1]) for line in r.stdout.splitlines()
             if line.startswith("/")}
    assert set(sizes) == {"/tmp", "/dev/shm"} and all(v <= cap for v in sizes.values()), r.stdout
    assert all(v >= cap - 2 ** 20 for v in sizes.values()), r.stdout     # it was usable
    assert "DEV-RO" in r.stdout


def test_8gb_allocation_fails():
    r = _py("x = bytearray(8 * 2**30)\nprint('ALLOCATED')", limits=sb.Limits(memory_mb=2048))
    assert "MemoryError" in r.stderr and "ALLOCATED" not in r.stdout


def test_infinite_loop_is_timed_out():
    t0 = time.perf_counter()
    r = _py("while True: pass", limits=sb.Limits(wall_s=2, cpu_s=60))
    assert r.timed_out and r.signal_name == "SIGKILL"
    assert time.perf_counter() - t0 < 20


def test_not_root_and_no_capabilities():
    r = sb.run_in_copy(None, ["sh", "-c", "id -u; id -g; grep -E '^Cap(Eff|Prm|Bnd)' "
                                          "/proc/self/status; grep NoNewPrivs /proc/self/status"],
                       limits=FAST)
    assert r.ok, r.stderr
    lines = r.stdout.split()
    assert lines[0] != "0" and lines[1] != "0"
    caps = dict(line.split(":") for line in r.stdout.splitlines() if line.startswith("Cap"))
    assert caps and all(int(v, 16) == 0 for v in caps.values()), caps
    assert "NoNewPrivs:\t1" in r.stdout
