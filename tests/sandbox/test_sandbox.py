"""Sandbox: limits kill runaway code, the network is refused, writes stay in the copy, output
is truncated, and the pytest status map matches a fixture project with known outcomes."""
import os
import socket
import sys
import threading

import pytest

from lib import sandbox as sb

FIXTURE_TESTS = '''
import pytest

def test_pass():
    assert 1 + 1 == 2

def test_fail():
    assert 1 + 1 == 3

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_error(broken):
    pass

@pytest.mark.xfail(reason="fixed meanwhile")
def test_xpass():
    assert True

@pytest.mark.parametrize("x", [1, "a b", 3])
def test_param(x):
    assert x != 3

class TestGroup:
    def test_method(self):
        assert True
'''
EXPECTED = {
    "tests/test_fixture.py::test_pass": "PASSED",
    "tests/test_fixture.py::test_fail": "FAILED",
    "tests/test_fixture.py::test_skip": "SKIPPED",
    "tests/test_fixture.py::test_xfail": "XFAIL",
    "tests/test_fixture.py::test_error": "ERROR",
    "tests/test_fixture.py::test_xpass": "PASSED",
    "tests/test_fixture.py::test_param[1]": "PASSED",
    "tests/test_fixture.py::test_param[a b]": "PASSED",
    "tests/test_fixture.py::test_param[3]": "FAILED",
    "tests/test_fixture.py::TestGroup::test_method": "PASSED",
    "tests/test_broken_import.py": "ERROR",
}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fixture.py").write_text(FIXTURE_TESTS)
    (tmp_path / "tests" / "test_broken_import.py").write_text("import no_such_module_xyz\n")
    (tmp_path / "data.txt").write_text("original\n")
    return tmp_path


def test_pytest_status_map_matches_known_outcomes(project):
    report = sb.run_pytest(str(project), ["tests"], limits=sb.Limits(wall_s=120, cpu_s=120))
    assert report.status == EXPECTED
    assert report.counts() == {"PASSED": 5, "FAILED": 2, "SKIPPED": 1, "ERROR": 2, "XFAIL": 1}
    assert (project / "data.txt").read_text() == "original\n"
    assert not any(p.name == "__pycache__" for p in project.rglob("*"))


def test_infinite_loop_is_killed_at_its_cpu_limit():
    r = sb.run_in_copy(None, [sys.executable, "-c", "while True: pass"],
                       limits=sb.Limits(wall_s=60, cpu_s=1))
    assert r.signal_name in ("SIGXCPU", "SIGKILL") and not r.timed_out
    assert r.wall_s < 30


def test_sleeping_process_is_killed_at_the_wall_limit():
    r = sb.run_in_copy(None, ["sleep", "30"], limits=sb.Limits(wall_s=1))
    assert r.timed_out and r.signal_name == "SIGKILL" and r.wall_s < 10


def test_memory_limit_makes_large_allocations_fail():
    r = sb.run_in_copy(None, [sys.executable, "-c", "x = bytearray(2 * 2**30)"],
                       limits=sb.Limits(memory_mb=512))
    assert r.returncode == 1 and "MemoryError" in r.stderr


@pytest.fixture
def listening_port():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    accepted = []

    def accept():
        try:
            conn, _ = srv.accept()
            accepted.append(conn)
        except OSError:
            pass
    threading.Thread(target=accept, daemon=True).start()
    yield srv.getsockname()[1], accepted
    srv.close()


CONNECT = ("import socket, sys\ns = socket.socket()\ns.settimeout(5)\n"
           "try:\n    s.connect(('127.0.0.1', {port}))\nexcept OSError as e:\n"
           "    print('REFUSED', type(e).__name__); sys.exit(3)\nprint('CONNECTED')\n")


@pytest.mark.parametrize("isolation", ["auto", "bwrap", "python_guard"])
def test_network_is_refused(isolation, listening_port):
    port, accepted = listening_port
    code = CONNECT.format(port=port)
    r = sb.run_in_copy(None, [sys.executable, "-c", code], isolation=isolation)
    assert r.returncode == 3 and "REFUSED" in r.stdout, (r.stdout, r.stderr)
    assert r.isolation == ("bwrap" if isolation == "auto" else isolation)
    allowed = sb.run_in_copy(None, [sys.executable, "-c", code], network="allow")
    assert "CONNECTED" in allowed.stdout                   # the server was reachable
    assert allowed.isolation == "bwrap"                    # still sandboxed, network shared


def test_missing_bwrap_is_refused_with_install_hint(monkeypatch):
    """No silent fallback to the Python guard: without bwrap, untrusted code does not run."""
    monkeypatch.setenv("PATH", "/nonexistent")
    sb._bwrap_works.cache_clear()
    try:
        with pytest.raises(sb.SandboxError, match="apt-get install -y bubblewrap"):
            sb.run_in_copy(None, ["true"])
        assert not sb.bwrap_available()
        guard = sb.run_in_copy(None, [sys.executable, "-c", "print(1)"],
                               isolation="python_guard")   # only when asked for by name
        assert guard.isolation == "python_guard" and guard.ok
    finally:
        sb._bwrap_works.cache_clear()


def test_isolation_choices_are_checked():
    with pytest.raises(ValueError, match="'unshare' was removed"):
        sb.run_in_copy(None, ["true"], isolation="unshare")
    with pytest.raises(ValueError, match="cannot block the network"):
        sb.run_in_copy(None, ["true"], isolation="none")
    with pytest.raises(ValueError, match="contradicts"):
        sb.run_in_copy(None, ["true"], isolation="python_guard", network="allow")
    with pytest.raises(ValueError, match="Limits.processes"):
        sb.Limits(processes=0)
    r = sb.run_in_copy(None, ["true"], isolation="none", network="allow")
    assert r.ok and r.isolation == "none"


def test_writes_stay_in_the_temporary_copy(project):
    script = ("import os\nopen('data.txt', 'w').write('changed')\nopen('new.txt', 'w').write('x')\n"
              "open(os.path.join(os.environ['HOME'], 'h.txt'), 'w').write('x')\n"
              "open(os.path.join(os.environ['TMPDIR'], 't.txt'), 'w').write('x')\n"
              "print(os.getcwd())\n")
    r = sb.run_in_copy(str(project), [sys.executable, "-c", script], keep=True)
    try:
        assert r.ok, r.stderr
        work = r.stdout.strip()
        assert work.startswith(r.root) and not work.startswith(str(project))
        assert open(os.path.join(work, "data.txt")).read() == "changed"
        for name in ("home/h.txt", "tmp/t.txt"):
            assert os.path.exists(os.path.join(r.root, name))
    finally:
        import shutil
        shutil.rmtree(r.root)
    assert (project / "data.txt").read_text() == "original\n"
    assert not (project / "new.txt").exists()
    gone = sb.run_in_copy(str(project), ["true"])
    assert gone.root is None


def test_output_is_truncated_head_and_tail():
    r = sb.run_in_copy(None, [sys.executable, "-c", "print('A' * 5000 + 'B' * 5000)"],
                       limits=sb.Limits(max_output_bytes=100))
    assert r.stdout_bytes == 10001
    assert r.stdout.startswith("A" * 50) and r.stdout.rstrip().endswith("B" * 49)
    assert "bytes truncated" in r.stdout and len(r.stdout) < 200


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="does not exist"):
        sb.run_in_copy("/no/such/dir", ["true"])
    with pytest.raises(ValueError, match="outside the sandbox"):
        sb.run_in_copy(None, ["true"], files={"../escape.txt": "x"})
    with pytest.raises(ValueError, match="wall_s"):
        sb.Limits(wall_s=0)
    with pytest.raises(sb.SandboxError, match="no test results"):
        sb.run_pytest(os.path.dirname(__file__), ["--no-such-flag"], python="/bin/false")
