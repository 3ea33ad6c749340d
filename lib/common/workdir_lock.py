"""One run per workdir: an exclusive `flock` on `<workdir>/.lock`, held until the process ends.

`acquire(workdir)` (called by `lib.common.workdir.prepare` on the primary process) takes the
lock without waiting and writes the holder into the file as JSON (pid, host, start time,
the kernel's start tick of the pid). A second process on the same workdir gets a
`WorkdirBusy` naming the holder's PID and host. The lock is re-entrant within a process:
acquiring a workdir, or a folder inside one, that this process already holds does nothing
(stages and sub-runs prepare sub-folders of their workdir); a folder inside a workdir that
another live process holds is refused like the workdir itself.

Stale locks. The kernel frees a `flock` when its holder dies, so the next process simply
takes it; when the file still names a holder that did not end cleanly, that take-over is
logged. A lock can also outlive its holder when a child forked by it (a data-loader
worker) inherited the descriptor and is still alive: the file then names a PID that is
dead (or reused) on this host while the lock is held. Such a lock file is replaced and
the take-over logged; the orphans keep a lock on the unlinked old file, which binds
no one. Every change of the lock file happens under a short-held guard lock
(`.lock.guard`), so two processes cannot both replace it.

On a filesystem without `flock` (some network mounts) the run continues unlocked with a
warning. Multi-host runs lock on the primary process only (`prepare(primary=...)`).
"""
from __future__ import annotations

import atexit
import datetime
import errno
import fcntl
import json
import os
import socket
import time

from absl import logging

from lib.common.config import WorkdirError

LOCK = ".lock"
GUARD = ".lock.guard"
_ATTEMPTS = 5
_GUARD_WAIT_S = 10.0

_HELD: dict[str, int] = {}     # real path of a locked workdir -> the descriptor holding it


class WorkdirBusy(WorkdirError):
    """Another live process holds the workdir's lock."""


def held() -> list[str]:
    """Real paths of the workdirs this process holds."""
    return sorted(_HELD)


def acquire(workdir: str) -> None:
    """Lock `workdir` for the rest of this process (see the module docstring).

    Raises `WorkdirBusy` when another live process holds it.
    """
    path = os.path.realpath(workdir)
    if any(path == h or path.startswith(h.rstrip(os.sep) + os.sep) for h in _HELD):
        return
    os.makedirs(path, exist_ok=True)
    _refuse_if_an_ancestor_is_held(workdir, path)
    lock_path = os.path.join(path, LOCK)
    guard = _open(os.path.join(path, GUARD))
    try:
        got = _flock(guard, wait_s=_GUARD_WAIT_S, what=os.path.join(path, GUARD))
        if got is None:
            raise WorkdirBusy(f"{os.path.join(path, GUARD)} stayed locked for {_GUARD_WAIT_S:g} s "
                              f"(another process is taking or replacing the lock of {workdir!r}); "
                              "rerun")
        if not got:
            return                                   # no flock here: warned, run unlocked
        for _ in range(_ATTEMPTS):
            fd = _open(lock_path)
            try:
                got = _flock(fd, wait_s=0.0, what=lock_path)
            except BaseException:
                os.close(fd)
                raise
            if got is None:                          # held by another process
                holder = _read(fd)
                os.close(fd)
                if holder is not None and _ended_here(holder):
                    logging.warning("lock %s names process %s on %s (started %s), which has "
                                    "ended, but a process it forked still holds the lock; "
                                    "replacing the lock file", lock_path, holder.get("pid"),
                                    holder.get("host"), holder.get("started"))
                    _unlink_quietly(lock_path)
                    continue
                raise WorkdirBusy(_busy_message(workdir, lock_path, holder))
            if not got:                              # no flock on this filesystem: warned
                os.close(fd)
                return
            previous = _read(fd)
            if previous is not None and not previous.get("released"):
                logging.warning("took over the lock of %s from process %s on %s (started %s), "
                                "which ended without releasing it", workdir,
                                previous.get("pid"), previous.get("host"),
                                previous.get("started"))
            _write(fd, _me())
            _HELD[path] = fd
            return
        raise WorkdirBusy(f"could not take the lock {lock_path} in {_ATTEMPTS} attempts "
                          "(its holders keep ending); rerun")
    finally:
        os.close(guard)


def _refuse_if_an_ancestor_is_held(workdir: str, path: str) -> None:
    """`WorkdirBusy` when a folder above `path` is locked by another live process (a stage
    or sub-run started on its own inside a running workdir)."""
    parent = os.path.dirname(path)
    while parent and parent != path:
        lock_path = os.path.join(parent, LOCK)
        if os.path.exists(lock_path):
            fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                except BlockingIOError:
                    holder = _read(fd)
                    if holder is None or not _ended_here(holder):
                        raise WorkdirBusy(_busy_message(workdir, lock_path, holder)) from None
                except OSError:
                    pass                                 # no flock there: nothing to learn
            finally:
                os.close(fd)
        path, parent = parent, os.path.dirname(parent)


def holder_of(workdir: str) -> dict | None:
    """The holder recorded in `<workdir>/.lock` (None when there is no readable record)."""
    try:
        fd = os.open(os.path.join(workdir, LOCK), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        return _read(fd)
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- helpers


def _open(path: str) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


def _flock(fd: int, *, wait_s: float, what: str) -> bool | None:
    """True when locked; None when another process holds it after `wait_s`; False when
    the filesystem has no flock (warned)."""
    t0 = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() - t0 >= wait_s:
                return None
            time.sleep(0.02)
        except OSError as err:
            if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                logging.warning("cannot lock %s (%s): this filesystem has no flock; running "
                                "without the one-run-per-workdir lock", what, err.strerror)
                return False
            raise


def _read(fd: int) -> dict | None:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    try:
        record = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _write(fd: int, record: dict) -> None:
    data = (json.dumps(record, sort_keys=True) + "\n").encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    os.fsync(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks since boot) of `pid`, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _me() -> dict:
    stat = _proc_stat(os.getpid())
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "proc_start": stat[1] if stat else None}


def _ended_here(holder: dict) -> bool:
    """True when `holder` ran on this host and that process has ended (or its PID now
    belongs to another process)."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    if holder.get("released"):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    stat = _proc_stat(pid)
    if stat is None:
        return False
    state, start = stat
    return state in ("Z", "X") or (holder.get("proc_start") is not None
                                   and start != holder["proc_start"])


def _busy_message(workdir: str, lock_path: str, holder: dict | None) -> str:
    if holder is None:
        who = "another process (its lock file names none)"
    else:
        who = (f"process {holder.get('pid')} on host {holder.get('host')} "
               f"(running since {holder.get('started')})")
    return (f"workdir {workdir!r} is in use by {who}, lock {lock_path}; wait for that run to "
            "end or stop it, or use another --workdir")


@atexit.register
def _release_all() -> None:
    """Mark this process's locks released on a clean exit (the kernel drops the locks)."""
    for fd in _HELD.values():
        try:
            record = _read(fd)
            if record is not None and record.get("pid") == os.getpid():
                _write(fd, {**record, "released": True})
        except OSError:
            pass
