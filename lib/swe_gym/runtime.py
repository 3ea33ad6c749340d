"""An instance materialised in an isolated checkout; patches; sandboxed, cached test runs.

    with Workspace.checkout(store, instance["repo"], instance["base_commit"]) as ws:
        ok, msg = ws.apply_patch(candidate)
        status = run_tests(ws.path, ["tests/test_x.py"], cache=cache).status

* `Workspace.checkout` clones the repository from the local store (`repos.repo_dir`) into a
  fresh temporary directory and checks out the commit (detached); the store is never
  modified. A repository missing from the store is a ValueError naming it (real SWE-bench
  / SWE-Gym instances need their repositories cloned there, or their docker images).
* `apply_patch` follows SWE-bench's order: `git apply`, then `git apply --reject`-free
  `patch --batch --fuzz=5 -p1` as the fallback; failure leaves the tree unchanged and
  returns (False, message) -- never an exception.
* `run_tests` runs pytest through `lib.lm.sandbox.run_pytest` (a temp copy, CPU / memory /
  file / wall limits, no network; PYTEST_DISABLE_PLUGIN_AUTOLOAD so site plugins do not
  slow every run) and parses the status map. Outcomes are cached by the SHA-256 of the
  tree's contents (without .git), the pytest arguments and the limits: the tests of these
  repositories are deterministic and run without network, so an identical tree gives an
  identical map. Timed-out or unparsable runs are never cached.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from lib.lm import sandbox
from lib.swe_gym import repos

DEFAULT_LIMITS = sandbox.Limits(wall_s=60.0, cpu_s=60, memory_mb=1024, file_mb=16,
                                max_output_bytes=200_000)
_PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "240"}


def tree_hash(root: str) -> str:
    """SHA-256 over (relative path, bytes) of every file under root except .git / caches."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__", ".pytest_cache"))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            h.update(rel.encode() + b"\0")
            if os.path.islink(path):
                h.update(b"link:" + os.readlink(path).encode())
            else:
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


class Workspace:
    """A temporary git checkout of one commit; a context manager deleting it on exit."""

    def __init__(self, path: str, base_commit: str):
        self.path, self.base_commit = path, base_commit

    @classmethod
    def checkout(cls, store: str, repo: str, commit: str) -> Workspace:
        src = os.path.abspath(repos.repo_dir(store, repo))
        if not os.path.isdir(os.path.join(src, ".git")):
            raise ValueError(f"repository {repo!r} is not in the store {store!r} (expected a git "
                             f"repository at {src}); clone it there first")
        root = tempfile.mkdtemp(prefix="swe_gym_ws_")
        path = os.path.join(root, "repo")
        try:
            repos.git(root, "clone", "-q", "--no-checkout", src, path)
            repos.git(path, "checkout", "-q", "--detach", commit)
        except RuntimeError:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return cls(path, commit)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)

    # ---------------------------------------------------------------- patches
    def apply_patch(self, patch: str) -> tuple[bool, str]:
        """(applied?, message). An empty patch applies trivially."""
        if not patch.strip():
            return True, "empty patch"
        fd, pfile = tempfile.mkstemp(suffix=".diff")
        with os.fdopen(fd, "w") as f:
            f.write(patch if patch.endswith("\n") else patch + "\n")
        try:
            r = repos.git(self.path, "apply", "--whitespace=nowarn", pfile, check=False)
            if r.returncode == 0:
                return True, "applied with git apply"
            if shutil.which("patch"):
                dry = subprocess.run(["patch", "--batch", "--fuzz=5", "-p1", "--dry-run", "-i", pfile],
                                     cwd=self.path, capture_output=True, text=True)
                if dry.returncode == 0:
                    subprocess.run(["patch", "--batch", "--fuzz=5", "-p1", "-i", pfile],
                                   cwd=self.path, capture_output=True, text=True, check=True)
                    return True, "applied with patch --fuzz=5"
            return False, r.stderr.strip()[:500] or "git apply failed"
        finally:
            os.unlink(pfile)

    def diff(self) -> str:
        """`git diff` of the working tree (new files included) against the base commit."""
        repos.git(self.path, "add", "-A")
        out = repos.git(self.path, "diff", "--cached", "--no-color", self.base_commit).stdout
        repos.git(self.path, "reset", "-q")
        return out

    def reset_files(self, paths: Sequence[str]) -> None:
        """Each path back to its base-commit content (deleted when the base lacks it)."""
        for rel in paths:
            r = repos.git(self.path, "cat-file", "-e", f"{self.base_commit}:{rel}", check=False)
            full = os.path.join(self.path, rel)
            if r.returncode == 0:
                repos.git(self.path, "checkout", "-q", self.base_commit, "--", rel)
            elif os.path.lexists(full):
                os.remove(full)


_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


def patch_files(patch: str) -> list[str]:
    """Paths a unified git diff touches (both sides of each `diff --git` header)."""
    out = []
    for a, b in _DIFF_FILE.findall(patch):
        for p in (a, b):
            if p not in out:
                out.append(p)
    return out


# --------------------------------------------------------------------------- tests


@dataclasses.dataclass
class TestRun:
    status: dict[str, str]
    messages: dict[str, str]      # test id -> short failure message from the -rA summary
    timed_out: bool = False
    error: str | None = None      # set when pytest produced no usable result
    cached: bool = False


class TestCache:
    """In-memory (and optionally on-disk, one JSON per key) cache of test outcomes."""

    def __init__(self, directory: str | None = None):
        self.directory = directory
        self.memory: dict[str, dict] = {}
        self.hits = self.misses = 0
        if directory:
            os.makedirs(directory, exist_ok=True)

    def get(self, key: str) -> dict | None:
        if key in self.memory:
            return self.memory[key]
        if self.directory:
            path = os.path.join(self.directory, key + ".json")
            if os.path.exists(path):
                with open(path) as f:
                    self.memory[key] = json.load(f)
                return self.memory[key]
        return None

    def put(self, key: str, value: dict) -> None:
        self.memory[key] = value
        if self.directory:
            path = os.path.join(self.directory, key + ".json")
            with open(path + ".tmp", "w") as f:
                json.dump(value, f)
            os.replace(path + ".tmp", path)


_MSG = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$", re.M)


def run_tests(root: str, args: Sequence[str], *, limits: sandbox.Limits = DEFAULT_LIMITS,
              cache: TestCache | None = None) -> TestRun:
    """pytest `args` on the tree at `root`, in the lib/lm sandbox (module docstring)."""
    key = None
    if cache is not None:
        blob = json.dumps([tree_hash(root), list(args), dataclasses.asdict(limits)])
        key = hashlib.sha256(blob.encode()).hexdigest()
        hit = cache.get(key)
        if hit is not None:
            cache.hits += 1
            return TestRun(dict(hit["status"]), dict(hit["messages"]), cached=True)
        cache.misses += 1
    ignore = shutil.ignore_patterns(".git")
    tmp = tempfile.mkdtemp(prefix="swe_gym_tests_")
    try:
        src = os.path.join(tmp, "src")
        shutil.copytree(root, src, symlinks=True, ignore=ignore)
        try:
            report = sandbox.run_pytest(src, list(args), limits=limits, env=_PYTEST_ENV)
        except sandbox.SandboxError as e:
            timed = "timed_out=True" in str(e)
            return TestRun({}, {}, timed_out=timed,
                           error=("tests timed out" if timed else f"test run failed: {e}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    messages = {m.group(1): (m.group(2) or "").strip() for m in _MSG.finditer(report.result.stdout)}
    run = TestRun(report.status, messages, timed_out=report.result.timed_out)
    if report.result.timed_out:
        run.error = "tests timed out"
    elif cache is not None:
        cache.put(key, {"status": run.status, "messages": run.messages})
    return run
