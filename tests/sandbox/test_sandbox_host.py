"""No path from the sandbox to the host's root: the sandbox's processes are an unprivileged
host uid with a seccomp filter and a read-only /proc/sys; memory (shared memory included) and
disk are bounded per sandbox; nothing setuid, no link out of the copy and no write through a
link of the source reaches the host; /proc inside shows no bwrap command line."""
import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from lib import sandbox as sb

FAST = sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024)


def _py(code, limits=FAST, **kw):
    return sb.run_in_copy(None, [sys.executable, "-c", code], limits=limits, **kw)


def _host_ids(cmdline: bytes, timeout: float = 20.0) -> list[int]:
    """Real/effective/saved/fs uids and gids, as the host sees them, of the process whose
    command line is `cmdline`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read() != cmdline:
                        continue
                with open(f"/proc/{pid}/status") as f:
                    lines = dict(line.split(":", 1) for line in f)
            except OSError:
                continue
            return [int(v) for k in ("Uid", "Gid") for v in lines[k].split()]
        time.sleep(0.05)
    raise AssertionError(f"no host process with the command line {cmdline!r}")


def test_sandbox_processes_are_not_host_root():
    cmd = ["sh", "-c", "sleep 3; true", f"lm-marker-{uuid.uuid4().hex}"]
    runs = []
    t = threading.Thread(target=lambda: runs.append(sb.run_in_copy(None, cmd, limits=FAST)))
    t.start()
    try:
        ids = _host_ids(b"".join(a.encode() + b"\0" for a in cmd))
    finally:
        t.join()
    want = sb.HOST_UID if os.geteuid() == 0 else os.getuid()
    assert 0 not in ids and ids[:4] == [want] * 4, ids
    assert runs[0].ok, runs[0].stderr


PROC_SYS = r"""
import ctypes, os
n = 0
for base, dirs, files in os.walk("/proc/sys"):
    for name in files:
        try:
            os.close(os.open(os.path.join(base, name), os.O_WRONLY))   # opened, never written
            n += 1
        except OSError:
            pass
print("WRITABLE", n)
try:
    os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
    print("CORE_PATTERN-OPEN")
except OSError as e:
    print("CORE_PATTERN-REFUSED", e.errno)
print("SECCOMP", [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")])
libc = ctypes.CDLL(None, use_errno=True)
print("PTRACE", libc.ptrace(0, 0, None, None), ctypes.get_errno())        # PTRACE_TRACEME
"""


def test_proc_sys_is_read_only_and_seccomp_refuses_ptrace():
    r = _py(PROC_SYS)
    assert r.ok, r.stderr
    assert "WRITABLE 0\n" in r.stdout and "CORE_PATTERN-REFUSED" in r.stdout, r.stdout
    if sb._seccomp_program(False) is not None:           # an architecture with a filter
        assert "SECCOMP ['2']" in r.stdout and "PTRACE -1 1\n" in r.stdout, r.stdout


def test_proc_shows_no_bwrap_command_line_and_masks_host_wide_files():
    code = ("import os\nfor p in sorted(filter(str.isdigit, os.listdir('/proc'))):\n"
            "    print(p, open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ')[:400])\n"
            "try:\n    print('TIMER_LIST', len(open('/proc/timer_list').read()))\n"
            "except OSError:\n    print('TIMER_LIST 0')\n")
    r = _py(code)
    assert r.ok, r.stderr
    assert "bwrap" not in r.stdout and "--ro-bind" not in r.stdout, r.stdout
    assert "TIMER_LIST 0" in r.stdout, r.stdout


MEMFD = r"""
import os
made = 0
for i in range(16):
    fd = os.memfd_create(f"m{i}")
    for _ in range(60):
        os.write(fd, b"x" * 2 ** 20)
    made += 60
    print("MEMFD_MIB", made, flush=True)
"""


def test_shared_memory_is_bounded_per_sandbox():
    """16 memfds x 60 MiB under memory_mb=128: killed by the memory cgroup, or refused
    (memfd_create) where there is none."""
    r = _py(MEMFD, limits=sb.Limits(wall_s=60, cpu_s=30, memory_mb=128))
    made = [int(line.split()[1]) for line in r.stdout.split("\n") if line.startswith("MEMFD")]
    assert not r.ok and max(made, default=0) <= 128, (r.returncode, r.stdout, r.stderr[-300:])


SPREAD = r"""
import mmap, os, select, time
r, w = os.pipe()
kids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        m = mmap.mmap(-1, 100 * 2 ** 20)
        for j in range(0, len(m), 4096):
            m[j] = 1
        os.write(w, b"k")
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
os.close(w)
held, alive = 0, set(kids)
while alive and held < len(kids):
    if select.select([r], [], [], 0.2)[0]:
        held += len(os.read(r, 8))
    for pid in list(alive):
        if os.waitpid(pid, os.WNOHANG)[0]:
            alive.discard(pid)
    if held + (len(kids) - len(alive)) >= len(kids):
        break
print("HELD_MIB", held * 100, flush=True)
for pid in alive:
    os.kill(pid, 9)
"""


@pytest.mark.skipif(sb._memory_limit_mechanism() != "cgroup",
                    reason="no writable memory cgroup here: memory is bounded per process only")
def test_memory_limit_holds_for_the_whole_sandbox():
    """6 processes x 100 MiB under memory_mb=200 (each within its own RLIMIT_AS): the
    sandbox as a whole holds at most 200 MiB."""
    r = _py(SPREAD, limits=sb.Limits(wall_s=60, cpu_s=30, memory_mb=200))
    held = [int(line.split()[1]) for line in r.stdout.split("\n") if line.startswith("HELD")]
    assert held and held[0] <= 200, (r.stdout, r.stderr[-300:])


def test_the_copy_and_tmpdir_are_bounded_together():
    code = ("import os\nn = 0\nfor d in ('.', os.environ['TMPDIR'], os.environ['HOME']):\n"
            "    for i in range(8):\n        try:\n"
            "            with open(os.path.join(d, f'f{i}'), 'wb') as f:\n"
            "                for _ in range(8):\n                    f.write(b'x' * 2 ** 20)\n"
            "            n += 8\n        except OSError:\n            break\n"
            "print('WROTE_MIB', n)\n")
    r = _py(code, limits=sb.Limits(wall_s=30, cpu_s=20, memory_mb=1024, file_mb=16, disk_mb=32))
    assert r.ok, r.stderr
    wrote = int(r.stdout.split()[-1])
    assert 16 <= wrote <= 32, r.stdout            # usable, and bounded in total


def test_nothing_setuid_and_no_link_out_comes_back():
    code = ("import os, shutil\nshutil.copy('/bin/true', 'suid')\nos.chmod('suid', 0o6755)\n"
            "os.symlink('/etc/shadow', 'shadow')\nos.symlink('../../../etc', 'etc')\n"
            "os.mkfifo('fifo')\nos.symlink('suid', 'inside')\n"
            "print(oct(os.stat('suid').st_mode))\n")
    r = _py(code, keep=True)
    try:
        assert r.ok and r.stdout.strip() == "0o106755", (r.stdout, r.stderr)
        work = os.path.join(r.root, "work")
        st = os.lstat(os.path.join(work, "suid"))
        assert st.st_mode & 0o7777 == 0o755 and st.st_uid == os.getuid(), oct(st.st_mode)
        assert sorted(os.listdir(work)) == ["inside", "suid"]    # no link leaving, no FIFO
        assert os.readlink(os.path.join(work, "inside")) == "suid"
    finally:
        import shutil
        shutil.rmtree(r.root)


def test_files_through_a_symlink_of_the_source_are_refused(tmp_path):
    src, host = tmp_path / "src", tmp_path / "host"
    src.mkdir()
    host.mkdir()
    (src / "out").symlink_to(host)
    with pytest.raises(ValueError, match="symbolic link 'out'"):
        sb.run_in_copy(str(src), ["true"], files={"out/x": "pwned"})
    with pytest.raises(ValueError, match="symbolic link 'out'"):
        sb.run_in_copy(str(src), ["true"], files={"out": "pwned"})
    assert list(host.iterdir()) == []
    r = sb.run_in_copy(str(src), ["cat", "sub/x"], files={"sub/x": "fine"}, limits=FAST)
    assert r.ok and r.stdout == "fine", (r.stdout, r.stderr)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: a root caller's sandbox")
def test_root_caller_binds_an_interpreter_others_cannot_reach(tmp_path):
    """As root, the interpreter may live where HOST_UID cannot go (pyenv under /root, a venv
    in a mode-700 mktemp directory): it is still found inside."""
    hidden = tmp_path / "hidden"
    hidden.mkdir(mode=0o700)
    venv = hidden / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    code = ("import sys\nsys.path.insert(0, {repo!r})\nfrom lib import sandbox as sb\n"
            "r = sb.run_in_copy(None, [sys.executable, '-c', 'import sys; print(sys.prefix)'])\n"
            "print(r.returncode, r.stdout.strip(), r.stderr[-300:])\n")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code.format(repo=repo)],
                       capture_output=True, text=True, timeout=120, cwd="/")
    assert r.returncode == 0 and r.stdout.split()[:2] == ["0", str(venv)], (r.stdout, r.stderr)


def test_kept_tree_unpacks_only_what_stays_inside(tmp_path):
    """The caller's side of keep=True against a hostile tar: names or links leaving the
    root, links to absolute paths, devices and FIFOs are left out; modes lose setuid."""
    import io
    import tarfile
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    buf = io.BytesIO()

    def add(name, kind=tarfile.REGTYPE, link="", mode=0o644, data=b"x"):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.mode = kind, link, mode
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        t.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    with tarfile.open(fileobj=buf, mode="w") as t:
        add("work", tarfile.DIRTYPE, mode=0o777)
        add("work/ok.txt", mode=0o6777)
        add("work/up", tarfile.SYMTYPE, link="../../outside")   # leaves root: dropped
        add("work/up/evil.txt")                                  # lands in a plain dir
        add("work/abs", tarfile.SYMTYPE, link="/etc")
        add("work/hard", tarfile.LNKTYPE, link="../outside/x")
        add("work/fifo", tarfile.FIFOTYPE)
        add("work/dev", tarfile.CHRTYPE)
        add("../escape.txt")
        add("/tmp/absolute.txt")
        add("etc/passwd")                                         # not work/home/tmp
        add("work/in", tarfile.SYMTYPE, link="../home")
        add("home", tarfile.DIRTYPE)
        add("work/in/through.txt")                                # inside: kept
    buf.seek(0)
    sb._unpack_kept(buf, str(root))
    assert list(outside.iterdir()) == []
    assert sorted(os.listdir(root / "work")) == ["in", "ok.txt", "up"]
    assert not os.path.islink(root / "work" / "up")
    assert (root / "home" / "through.txt").read_bytes() == b"x"
    st = os.lstat(root / "work" / "ok.txt")
    assert st.st_mode & 0o7777 == 0o755 and st.st_uid == os.getuid()
    assert os.lstat(root / "work").st_mode & 0o7777 == 0o755
    assert sorted(os.listdir(root)) == ["home", "work"]
