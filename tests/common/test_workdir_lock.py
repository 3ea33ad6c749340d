"""One run per workdir: `workdir.prepare` locks `<workdir>/.lock` for the life of the process.

Real processes: a holder subprocess that takes the lock and sleeps; a second process (this
test process, and the regression app through `cli.run`) is refused naming the holder; a
holder killed with SIGKILL, or one whose forked child still holds the lock after it died,
is taken over with a log line.
"""
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from lib.common import workdir as wd
from lib.common import workdir_lock
from tests.common import harness_utils as hu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = {"model": {"hidden": 32}, "train": {"num_steps": 5}}


def _start_holder(workdir: str, body: str = "time.sleep(120)") -> subprocess.Popen:
    """A process that prepares `workdir` (taking its lock), prints 'locked', then runs `body`."""
    script = textwrap.dedent(f"""
        import os, sys, time
        from lib.common import workdir as wd
        wd.prepare({workdir!r}, {CONFIG!r})
        print("locked", flush=True)
    """) + textwrap.dedent(body)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**hu.clean_env(), "PYTHONPATH": ROOT})
    line = proc.stdout.readline()       # blocks until the lock is taken (or the holder died)
    assert line.strip() == "locked", proc.stderr.read()[-2000:]
    return proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)


def _lock_record(workdir: str) -> dict:
    with open(os.path.join(workdir, workdir_lock.LOCK)) as f:
        return json.load(f)


def test_a_second_process_is_refused_naming_the_holder_then_takes_over_a_dead_one(
        tmp_path, caplog):
    workdir = str(tmp_path / "run")
    holder = _start_holder(workdir)
    try:
        record = _lock_record(workdir)
        assert record["pid"] == holder.pid and record["host"] == socket.gethostname()
        who = f"in use by process {holder.pid} on host {socket.gethostname()}"
        with pytest.raises(workdir_lock.WorkdirBusy, match=who):
            wd.prepare(workdir, CONFIG)
        with pytest.raises(workdir_lock.WorkdirBusy, match=who):
            wd.prepare(os.path.join(workdir, "stage_1"), CONFIG)    # a folder inside it too
        # The real binary: one line on stderr, exit 2, config.json untouched.
        proc = hu.run_app(workdir, "tiny")
        assert proc.returncode == 2, proc.stderr[-2000:]
        (line,) = hu.non_log_lines(proc.stderr)          # one line, no traceback
        assert line.startswith(f"workdir error: workdir {workdir!r} is {who}")
        assert json.load(open(os.path.join(workdir, wd.CONFIG))) == CONFIG
    finally:
        holder.send_signal(signal.SIGKILL)
        _stop(holder)
    with caplog.at_level(logging.WARNING):
        wd.prepare(workdir, CONFIG)                   # the kernel freed the dead holder's lock
    assert f"from process {holder.pid} on {socket.gethostname()}" in caplog.text
    assert "ended without releasing it" in caplog.text
    assert _lock_record(workdir)["pid"] == os.getpid()


def test_a_lock_kept_by_the_forked_child_of_a_dead_holder_is_taken_over(tmp_path, caplog):
    # A data-loader worker forked by the run inherits the lock's descriptor and can outlive
    # it: the lock is still held, but the PID it names is dead on this host.
    workdir = str(tmp_path / "run")
    holder = _start_holder(workdir, """
        child = os.fork()
        if child == 0:
            time.sleep(120)
            os._exit(0)
        print(child, flush=True)
        os._exit(1)                                   # dies without releasing anything
    """)
    child = int(holder.stdout.readline())
    holder.wait(timeout=30)
    try:
        assert _lock_record(workdir)["pid"] == holder.pid
        with caplog.at_level(logging.WARNING):
            wd.prepare(workdir, CONFIG)
        assert f"names process {holder.pid} on {socket.gethostname()}" in caplog.text
        assert "a process it forked still holds the lock" in caplog.text
        assert _lock_record(workdir)["pid"] == os.getpid()
        # ... and the new lock binds others: a process started now is refused, naming us.
        proc = subprocess.run(
            [sys.executable, "-c", f"from lib.common import workdir as wd; "
                                   f"wd.prepare({workdir!r}, {CONFIG!r})"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
            env={**hu.clean_env(), "PYTHONPATH": ROOT})
        assert proc.returncode != 0
        assert f"in use by process {os.getpid()} on host" in proc.stderr
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_process_re_enters_its_own_workdir_and_its_sub_folders(tmp_path):
    workdir = str(tmp_path / "run")
    wd.prepare(workdir, CONFIG)
    wd.prepare(workdir, CONFIG)                                # a second stage, same process
    wd.prepare(os.path.join(workdir, "runs", "a"), {"other": 1})
    held = workdir_lock.held()
    assert os.path.realpath(workdir) in held
    assert os.path.realpath(os.path.join(workdir, "runs", "a")) not in held   # covered by it
    assert not os.path.exists(os.path.join(workdir, "runs", "a", workdir_lock.LOCK))


def test_a_clean_exit_releases_without_a_take_over_line(tmp_path, caplog):
    workdir = str(tmp_path / "run")
    holder = _start_holder(workdir, "sys.exit(0)")
    holder.wait(timeout=30)
    assert _lock_record(workdir)["released"] is True
    with caplog.at_level(logging.WARNING):
        wd.prepare(workdir, CONFIG)
    assert "took over" not in caplog.text and "forked" not in caplog.text
    assert _lock_record(workdir) == {**_lock_record(workdir), "pid": os.getpid()}
    assert "released" not in _lock_record(workdir)
