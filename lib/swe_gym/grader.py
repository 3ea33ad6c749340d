"""Grading a candidate patch by the SWE-bench rules (swebench/harness/grading.py).

    report = grade(instance, patch, store, cache=cache)
    report.resolution   # "FULL" | "PARTIAL" | "NO";  report.resolved = (resolution == "FULL")

Procedure (SWE-bench's evaluation, on a local checkout instead of a docker image):
  1. check out `base_commit` in a fresh temporary clone (runtime.Workspace);
  2. apply the candidate patch; when it does not apply the verdict is NO with
     error "patch apply failed" (SWE-bench's `Patch Apply Failed`), never an exception;
  3. grade the task's own tests: the candidate's changes to tests and pytest configuration
     are stripped -- every `protected` path it added, changed, replaced or deleted (test
     files, conftest.py anywhere, pytest.ini / pyproject.toml / setup.cfg / tox.ini
     anywhere, the test patch's files and the files run) is restored to its base-commit
     content or removed, the rest of the patch stays -- then `test_patch` is applied;
  4. run pytest on the test files named by the test patch and by FAIL_TO_PASS /
     PASS_TO_PASS, in the sandbox (lib/sandbox.py); the status map comes from the result file
     that lib.sandbox.run_pytest's own plugin writes, never from pytest's output;
  5. the rules (`resolution`):
       F2P test succeeds  iff its status is PASSED or XFAIL (FAILED, ERROR, SKIPPED or
                          absent from the log count as failed: a skipped F2P test fails);
       P2P test maintained iff PASSED, XFAIL or SKIPPED (FAILED, ERROR or absent: broken);
       f2p = successes / |F2P|,  p2p = maintained / |P2P|  (1 when the list is empty);
       FULL iff f2p == 1 and p2p == 1;  PARTIAL iff 0 < f2p < 1 and p2p == 1;  else NO.
A run that times out or leaves no result file is NO with that error.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import time

from lib import sandbox
from lib.swe_gym import instances as inst_lib
from lib.swe_gym import runtime

F2P_OK = ("PASSED", "XFAIL")
P2P_OK = ("PASSED", "XFAIL", "SKIPPED")
PYTEST_CONFIG = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
TEST_DIRS = ("tests", "test", "testing")
TEST_FILES = ("test_*.py", "*_test.py")
# part of every verdict-cache key: verdicts given under other rules are not reused
_RULES = "protected paths restored; statuses from the result file"


@dataclasses.dataclass
class GradeReport:
    instance_id: str
    resolution: str                 # FULL | PARTIAL | NO
    patch_applied: bool
    error: str | None               # "patch apply failed", "tests timed out", ...
    f2p_success: list[str]
    f2p_failure: list[str]
    p2p_success: list[str]
    p2p_failure: list[str]
    status: dict[str, str]
    wall_s: float = 0.0
    cached: bool = False
    stripped: list[str] = dataclasses.field(default_factory=list)   # candidate's changes undone

    @property
    def resolved(self) -> bool:
        return self.resolution == "FULL"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["resolved"] = self.resolved
        return d


def resolution(status: dict[str, str], f2p: list[str], p2p: list[str]) -> dict:
    """The SWE-bench rules of the module docstring on a status map."""
    f_ok = [t for t in f2p if status.get(t) in F2P_OK]
    f_bad = [t for t in f2p if status.get(t) not in F2P_OK]
    p_ok = [t for t in p2p if status.get(t) in P2P_OK]
    p_bad = [t for t in p2p if status.get(t) not in P2P_OK]
    f_rate = len(f_ok) / len(f2p) if f2p else 1.0
    p_rate = len(p_ok) / len(p2p) if p2p else 1.0
    if f_rate == 1.0 and p_rate == 1.0:
        res = "FULL"
    elif 0.0 < f_rate < 1.0 and p_rate == 1.0:
        res = "PARTIAL"
    else:
        res = "NO"
    return {"resolution": res, "f2p_success": f_ok, "f2p_failure": f_bad,
            "p2p_success": p_ok, "p2p_failure": p_bad}


def protected(rel: str) -> bool:
    """Whether a candidate's change to the path `rel` is stripped before grading: a pytest
    configuration file or test-directory name anywhere on the path, or a test file name."""
    parts = rel.split("/")
    return (any(p in PYTEST_CONFIG or p in TEST_DIRS for p in parts)
            or any(fnmatch.fnmatchcase(parts[-1], pat) for pat in TEST_FILES))


def test_targets(instance: dict) -> list[str]:
    """Test files to run: those of the test patch and of every F2P/P2P id."""
    files = [p for p in runtime.patch_files(instance["test_patch"]) if p.endswith(".py")]
    for field in inst_lib.TEST_LISTS:
        for t in inst_lib.test_list(instance, field):
            f = t.split("::")[0]
            if f not in files:
                files.append(f)
    return sorted(files)


def grade(instance: dict, patch: str, store: str, *,
          limits: sandbox.Limits = runtime.DEFAULT_LIMITS,
          cache: runtime.TestCache | None = None) -> GradeReport:
    """Grade `patch` on `instance` (module docstring); never raises for a bad patch."""
    t0 = time.perf_counter()
    f2p = inst_lib.test_list(instance, "FAIL_TO_PASS")
    p2p = inst_lib.test_list(instance, "PASS_TO_PASS")
    iid = instance["instance_id"]
    with runtime.Workspace.checkout(store, instance["repo"], instance["base_commit"]) as ws:
        ok, msg = ws.apply_patch(patch)
        if not ok:
            return GradeReport(iid, "NO", False, "patch apply failed", [], list(f2p), [],
                               list(p2p), {}, time.perf_counter() - t0)
        own = set(runtime.patch_files(instance["test_patch"])) | set(test_targets(instance))
        stripped = ws.changed_paths(lambda rel: rel in own or protected(rel))
        ws.reset_files(sorted(own | set(stripped)))
        ok, msg = ws.apply_patch(instance["test_patch"])
        if not ok:
            raise ValueError(f"{iid}: the instance's test_patch does not apply to base_commit "
                             f"({msg}); the instance is broken")
        run = runtime.run_tests(ws.path, test_targets(instance), limits=limits, cache=cache)
    if run.error:
        return GradeReport(iid, "NO", True, run.error, [], list(f2p), [], list(p2p),
                           run.status, time.perf_counter() - t0, stripped=stripped)
    r = resolution(run.status, f2p, p2p)
    return GradeReport(iid, r["resolution"], True, None, r["f2p_success"], r["f2p_failure"],
                       r["p2p_success"], r["p2p_failure"], run.status,
                       time.perf_counter() - t0, run.cached, stripped)


class GradeCache:
    """Verdicts keyed by (instance, patch): a duplicate patch is graded once.

    key = SHA-256 of (the grading rules' tag, instance_id, base_commit, SHA-256(test_patch),
    FAIL_TO_PASS, PASS_TO_PASS, SHA-256(patch)); the value is `GradeReport.to_dict()`. In
    memory, and on disk (one JSON per key under `directory`) so that reruns and later
    expert-iteration rounds reuse verdicts. Verdicts of runs that timed out are not stored
    (a loaded machine may time out a passing run).

        gc = GradeCache(dir);  report = gc.grade(instance, patch, store, limits=..., cache=...)
        gc.graded, gc.hits         # pytest gradings done / answered from the cache
    """

    def __init__(self, directory: str | None = None):
        self._store = runtime.TestCache(directory)
        self.graded = self.hits = 0

    @staticmethod
    def key(instance: dict, patch: str) -> str:
        h = lambda s: hashlib.sha256(s.encode()).hexdigest()   # noqa: E731
        blob = json.dumps([_RULES, instance["instance_id"], instance["base_commit"],
                           h(instance["test_patch"]), instance["FAIL_TO_PASS"],
                           instance["PASS_TO_PASS"], h(patch)])
        return h(blob)

    def grade(self, instance: dict, patch: str, store: str, *,
              limits: sandbox.Limits = runtime.DEFAULT_LIMITS,
              cache: runtime.TestCache | None = None) -> GradeReport:
        k = self.key(instance, patch)
        hit = self._store.get(k)
        if hit is not None:
            self.hits += 1
            d = {f.name: hit[f.name] for f in dataclasses.fields(GradeReport)}
            return GradeReport(**{**d, "cached": True})
        self.graded += 1
        rep = grade(instance, patch, store, limits=limits, cache=cache)
        if rep.error != "tests timed out":
            self._store.put(k, rep.to_dict())
        return rep
