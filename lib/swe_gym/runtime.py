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
* `run_tests` runs pytest through `lib.sandbox.run_pytest` (a temp copy, CPU / memory /
  file / wall limits, no network; PYTEST_DISABLE_PLUGIN_AUTOLOAD so site plugins do not
  slow every run); the status map comes from run_pytest's result file, the failure
  messages (descriptive only) from its output. Outcomes are cached by the SHA-256 of the
  tree's contents (without .git), the pytest arguments and the limits: the tests of these
  repositories are deterministic and run without network, so an identical tree gives an
  identical map. Timed-out runs and runs without a result are never cached.

The tree may hold what sandboxed code wrote. Host-side git runs with the workspace's own
.git (made by the checkout; a sandbox's copy of .git is never adopted, see agent.AgentEnv)
and with every other configuration ignored (`repos.git`); files are read through
`treefs` (no link followed, no FIFO or device opened).
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

from lib import sandbox
from lib.swe_gym import repos, treefs

DEFAULT_LIMITS = sandbox.Limits(wall_s=60.0, cpu_s=60, memory_mb=1024, file_mb=16,
                                max_output_bytes=200_000)
_PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "240"}
# part of every test-cache key: outcomes produced another way are not reused
_CACHE_SALT = "pytest result file"
_HASH_SKIP = (".git", "__pycache__", ".pytest_cache")


def tree_hash(root: str) -> str:
    """SHA-256 over (relative path, content) of every entry under root except .git and
    caches: a file's bytes, a link's text (never followed), a FIFO / socket / device or an
    unreadable entry only as such (never opened)."""
    h = hashlib.sha256()
    for rel, kind in treefs.walk(root, _HASH_SKIP):
        if kind == "dir":
            continue
        h.update(rel.encode() + b"\0")
        if kind == "link":
            h.update(b"link:" + os.readlink(os.path.join(root, rel)).encode())
        elif kind == "file":
            try:
                h.update(treefs.file_digest(root, rel))
            except OSError:
                h.update(b"unreadable")
        else:
            h.update(b"special")
    return h.hexdigest()


_MAX_COMPARED_BYTES = 1 << 30


def _lkind(root: str, rel: str) -> str | None:
    """treefs.lkind, None also when a directory on the way is missing, a link or a file
    (then nothing at rel is inside the tree)."""
    try:
        return treefs.lkind(root, rel)
    except treefs.TreeError:
        return None


def _blob_id(data: bytes) -> str:
    """git's object id of a blob holding `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


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

    def base_entries(self) -> dict[str, tuple[str, str]]:
        """{path: (git mode, object id)} of every file and link of the base commit."""
        out = repos.git(self.path, "ls-tree", "-r", "-z", "--full-tree", self.base_commit).stdout
        entries = {}
        for rec in filter(None, out.split("\0")):
            meta, rel = rec.split("\t", 1)
            mode, _, oid = meta.split()
            entries[rel] = (mode, oid)
        return entries

    def changed_paths(self, select=lambda rel: True) -> list[str]:
        """Sorted paths (among those `select` accepts) where the tree differs from the base
        commit: entries the base lacks (not directories), and base files or links that are
        missing, replaced or changed (content, link text or executable bit). Compares
        content on the host, never through git on the tree, so ignore rules do not hide a
        file."""
        base = {p: e for p, e in self.base_entries().items() if select(p)}
        out = set()
        for rel, kind in treefs.walk(self.path, (".git",)):
            if not select(rel) or (kind == "dir" and rel not in base):
                continue
            mode, oid = base.get(rel, (None, None))
            if kind == "file":
                data = treefs.read_bytes(self.path, rel, _MAX_COMPARED_BYTES)
                execu = os.lstat(os.path.join(self.path, rel)).st_mode & 0o100
                same = oid == _blob_id(data) and mode == ("100755" if execu else "100644")
            elif kind == "link":
                target = os.readlink(os.path.join(self.path, rel)).encode()
                same = mode == "120000" and oid == _blob_id(target)
            else:
                same = False
            if not same:
                out.add(rel)
        for rel in base:
            if rel not in out and _lkind(self.path, rel) is None:
                out.add(rel)
        return sorted(out)

    def reset_files(self, paths: Sequence[str]) -> None:
        """Each path back to its base-commit content (deleted when the base lacks it; a
        link is removed, never followed)."""
        base = self.base_entries()
        for rel in sorted(paths, key=lambda p: (p.count("/"), p)):
            if rel not in base and _lkind(self.path, rel) is not None:
                treefs.remove(self.path, rel)
        restore = [p for p in paths if p in base]
        if restore:
            repos.git(self.path, "--literal-pathspecs", "checkout", "-q", self.base_commit,
                      "--pathspec-from-file=-", "--pathspec-file-nul",
                      input_text="\0".join(restore))


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
    """pytest `args` on the tree at `root`, in the sandbox (lib/sandbox.py; module docstring)."""
    key = None
    if cache is not None:
        blob = json.dumps([_CACHE_SALT, tree_hash(root), list(args), dataclasses.asdict(limits)])
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
