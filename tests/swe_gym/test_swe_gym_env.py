"""The environment: instances, generation, runtime and grader (the issue's tests)."""
import json
import os
import time

import pytest

from lib import sandbox
from lib.swe_gym import grader, instances, repos, runtime


def test_gold_resolves_every_instance_and_empty_none(gym):
    store, cache, insts = gym
    for inst in insts:
        assert grader.grade(inst, inst["patch"], store, cache=cache).resolution == "FULL"
        empty = grader.grade(inst, "", store, cache=cache)
        assert empty.resolution == "NO" and empty.f2p_failure


def test_grader_agrees_with_direct_rerun_without_cache(gym):
    store, _, insts = gym
    inst = insts[0]
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        assert ws.apply_patch(inst["test_patch"])[0]
        direct = sandbox.run_pytest(ws.path, ["tests"], env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    f2p = instances.test_list(inst, "FAIL_TO_PASS")
    assert all(direct.status.get(t) != "PASSED" for t in f2p)
    report = grader.grade(inst, "", store, cache=None)
    assert sorted(report.f2p_failure) == sorted(f2p) and not report.cached


def test_fix_one_break_another_is_not_resolved(gym):
    store, cache, insts = gym
    inst = insts[0]
    p2p = instances.test_list(inst, "PASS_TO_PASS")
    victim = next(f for f in ("clamp", "normalize", "safe_div", "mean")
                  if any(t.split("::")[1].startswith(f"test_{f}_") for t in p2p))
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        assert ws.apply_patch(inst["patch"])[0]           # the fix ...
        path = os.path.join(ws.path, "testkit/numeric.py")
        with open(path) as f:
            src = f.read()
        head = f"def {victim}("
        at = src.index("\n", src.index('"""', src.index(head) + 4) + 3) + 1
        with open(path, "w") as f:                         # ... and a broken other function
            f.write(src[:at] + "    return None\n" + src[at:])
        patch = ws.diff()
    report = grader.grade(inst, patch, store, cache=cache)
    assert not report.f2p_failure and report.p2p_failure
    assert any(f"test_{victim}_" in t for t in report.p2p_failure)
    assert report.resolution == "NO" and not report.resolved


def test_malformed_patch_reported_not_raised(gym):
    store, cache, insts = gym
    bad = "diff --git a/testkit/numeric.py b/testkit/numeric.py\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-nope\n+yes\n"
    for patch in (bad, "this is not a diff at all\n"):
        r = grader.grade(insts[0], patch, store, cache=cache)
        assert r.error == "patch apply failed" and r.resolution == "NO" and not r.patch_applied


def test_resolution_rules():
    f2p, p2p = ["a", "b"], ["c", "d"]
    st = {"a": "PASSED", "b": "XFAIL", "c": "PASSED", "d": "SKIPPED"}
    assert grader.resolution(st, f2p, p2p)["resolution"] == "FULL"
    assert grader.resolution({**st, "b": "SKIPPED"}, f2p, p2p)["resolution"] == "PARTIAL"
    assert grader.resolution({**st, "a": "SKIPPED", "b": "ERROR"}, f2p, p2p)["resolution"] == "NO"
    assert grader.resolution({**st, "d": "FAILED"}, f2p, p2p)["resolution"] == "NO"
    no_c = {k: v for k, v in st.items() if k != "c"}          # an absent P2P test is broken
    assert grader.resolution(no_c, f2p, p2p)["p2p_failure"] == ["c"]


def _instance_with_test(store, inst, name, body):
    """A copy of `inst` whose test_patch also adds tests/test_<name>.py (F2P)."""
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        assert ws.apply_patch(inst["test_patch"])[0]
        with open(os.path.join(ws.path, f"tests/test_{name}.py"), "w") as f:
            f.write(body)
        test_patch = ws.diff()
    f2p = instances.test_list(inst, "FAIL_TO_PASS") + [f"tests/test_{name}.py::test_{name}"]
    return {**inst, "test_patch": test_patch, "FAIL_TO_PASS": json.dumps(f2p)}


def test_sandbox_limits_hold_for_hanging_and_forking_tests(gym):
    store, _, insts = gym
    limits = sandbox.Limits(wall_s=4.0, cpu_s=10, memory_mb=1024, file_mb=8)
    hang = _instance_with_test(store, insts[0], "hang",
                               "def test_hang():\n    while True:\n        pass\n")
    t0 = time.perf_counter()
    r = grader.grade(hang, hang["patch"], store, limits=limits)
    assert r.resolution == "NO" and r.error == "tests timed out"
    assert time.perf_counter() - t0 < 30
    marker = f"swe_gym_fork_marker_{os.getpid()}_{time.time_ns()}"
    fork = _instance_with_test(store, insts[0], "fork", (
        "import os, sys, time\n"
        "def test_fork():\n"
        "    if os.fork() == 0:\n"
        "        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)',\n"
        f"                                  {marker!r}])\n"
        "    time.sleep(600)\n"))
    r = grader.grade(fork, fork["patch"], store, limits=limits)
    assert r.resolution == "NO" and r.error == "tests timed out"
    time.sleep(0.2)
    assert _alive_with(marker) == []  # the forked child died with the sandbox


def _alive_with(marker):
    """Pids of running (not zombie) processes whose command line contains `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read() and _alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def _alive(pid):
    """Running (a zombie, dead but not yet reaped by init, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_instances_round_trip_and_errors(gym, tmp_path):
    _, _, insts = gym
    for ext in ("json", "jsonl"):
        path = str(tmp_path / f"i.{ext}")
        instances.save(path, insts)
        back = instances.load(path)
        assert [b["instance_id"] for b in back] == [i["instance_id"] for i in insts]
        assert back[0]["FAIL_TO_PASS"] == insts[0]["FAIL_TO_PASS"]
    real = {f: "x" for f in instances.FIELDS}            # SWE-bench style: lists as JSON text
    real.update(FAIL_TO_PASS='["tests/test_a.py::test_b"]', PASS_TO_PASS="[]",
                image_name="xingyaoww/sweb.eval.x86_64.a")
    path = tmp_path / "real.jsonl"
    path.write_text(json.dumps(real) + "\n" + json.dumps({**real, "instance_id": "y",
                                                          "PASS_TO_PASS": 3}) + "\n")
    with pytest.raises(ValueError, match=r"real.jsonl:2: field PASS_TO_PASS"):
        instances.load(str(path))
    path.write_text(json.dumps({k: v for k, v in real.items() if k != "patch"}) + "\n")
    with pytest.raises(ValueError, match=r":1: missing SWE-bench field\(s\) \['patch'\]"):
        instances.load(str(path))
    path.write_text(json.dumps(real) + "\n")
    assert instances.load(str(path))[0]["image_name"].startswith("xingyaoww")
    with pytest.raises(ValueError, match="not in the store"):
        runtime.Workspace.checkout(str(tmp_path), "django/django", "abc")


def test_generated_instance_fields(gym):
    store, _, insts = gym
    for inst in insts:
        f2p = instances.test_list(inst, "FAIL_TO_PASS")
        p2p = instances.test_list(inst, "PASS_TO_PASS")
        assert f2p and not set(f2p) & set(p2p)
        assert runtime.patch_files(inst["patch"]) == ["testkit/numeric.py"]
        assert runtime.patch_files(inst["test_patch"]) == ["tests/test_numeric.py"]
        assert "```python" in inst["problem_statement"]
        log = repos.git(repos.repo_dir(store, inst["repo"]), "log", "--format=%s",
                        inst["base_commit"]).stdout.split("\n")
        assert log[0].startswith("Refactor") and "Initial layout" in log
        assert inst["environment_setup_commit"] != inst["base_commit"]
