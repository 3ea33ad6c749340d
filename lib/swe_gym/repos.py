"""Small pure-Python repositories written by the workspace, with a test suite and git history.

A `RepoSpec` is a package name and, per theme of `templates.THEMES`, the functions it
holds (closed under the functions they call). `build(spec, store)` writes the repository
into `<store>/<dir>` and commits it in steps (a fixed author and dates, so the hashes are
reproducible):

    <pkg>/__init__.py, README.md         "Initial layout"
    <pkg>/<theme>.py + tests/test_<theme>.py   "Add <theme> helpers"   (one commit per theme)

Tests are one function per input, `assert f(*args) == expected`, with `expected` computed
by running the correct function now; their ids are `tests/test_<theme>.py::test_<f>_<k>`.
`git` is run through `subprocess` (the CLI; no Python binding).
"""
from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Mapping, Sequence

import numpy as np

from lib.swe_gym import templates

ORG = "swe-gym-mini"
_WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris",
          "juniper", "kestrel", "lumen", "maple", "nectar", "onyx", "pebble", "quartz", "raven",
          "sable", "tundra", "umber", "vesper", "willow", "xenon", "yarrow", "zephyr")
_ENV = {"GIT_AUTHOR_NAME": "SWE-Gym generator", "GIT_AUTHOR_EMAIL": "gen@example.invalid",
        "GIT_COMMITTER_NAME": "SWE-Gym generator", "GIT_COMMITTER_EMAIL": "gen@example.invalid"}


# Only the repository's own .git/config is read (the system and global files are not), and
# the settings through which a config could run a program are pinned on the command line
# (which wins over any file): no hooks, no fsmonitor, no pager, no ssh, no credential helper.
_SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.pager=cat",
         "-c", "core.sshCommand=false", "-c", "credential.helper=", "-c", "protocol.allow=never",
         "-c", "protocol.file.allow=always", "-c", "core.untrackedCache=false")
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR")


def git(cwd: str, *args: str, date: str = "2024-01-01T00:00:00+00:00", check: bool = True,
        input_text: str | None = None) -> subprocess.CompletedProcess:
    """Run `git <args>` in `cwd` with the generator's identity and a fixed date, ignoring the
    system and global configuration and every GIT_* variable of this process (`_SAFE`)."""
    env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
    env.update(_ENV, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date, GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0", HOME="/nonexistent",
               GIT_CEILING_DIRECTORIES=os.path.dirname(os.path.abspath(cwd)))
    proc = subprocess.run(["git", *_SAFE, "-c", "init.defaultBranch=main",
                           "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, input=input_text,
                          stdin=None if input_text is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[:500]}")
    return proc


@dataclasses.dataclass(frozen=True)
class RepoSpec:
    package: str
    functions: Mapping[str, tuple[str, ...]]    # theme -> function names, in template order

    @property
    def name(self) -> str:
        return f"{ORG}/{self.package}"


def repo_dir(store: str, repo: str) -> str:
    """Where the git repository of `repo` ("owner/name") lives in the store."""
    return os.path.join(store, repo.replace("/", "__"))


def _closure(theme: str, names: set[str]) -> set[str]:
    by_name = {f.name: f for f in templates.THEMES[theme]}
    todo, out = list(names), set()
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(by_name[n].calls)
    return out


def sample_specs(num_repos: int, seed: int, themes_per_repo: int = 3,
                 funcs_per_theme: int = 5) -> list[RepoSpec]:
    """`num_repos` distinct repositories: a package name, `themes_per_repo` themes, and
    about `funcs_per_theme` functions of each (plus what they call)."""
    rng = np.random.default_rng(seed)
    names = [f"{a}{b}" for a in _WORDS for b in ("kit", "lib", "tools", "util", "core")]
    order = rng.permutation(len(names))
    theme_names = sorted(templates.THEMES)
    specs = []
    for r in range(num_repos):
        chosen = sorted(str(t) for t in rng.choice(
            theme_names, size=min(themes_per_repo, len(theme_names)), replace=False))
        funcs = {}
        for theme in chosen:
            pool = [f.name for f in templates.THEMES[theme]]
            pick = {str(n) for n in rng.choice(pool, size=min(funcs_per_theme, len(pool)), replace=False)}
            keep = _closure(theme, pick)
            funcs[theme] = tuple(f for f in pool if f in keep)
        specs.append(RepoSpec(names[order[r % len(names)]] + ("" if r < len(names) else str(r)),
                              funcs))
    return specs


def module_source(theme: str, names: Sequence[str]) -> str:
    funcs = [f for f in templates.THEMES[theme] if f.name in set(names)]
    head = f'"""{theme.capitalize()} helpers."""\n\n\n'
    return head + "\n\n".join(f.source for f in funcs)


def expected_values(theme: str, names: Sequence[str]) -> dict[str, list]:
    """{function: [f(*args) for each input]} by executing the correct module source."""
    ns: dict = {}
    exec(compile(module_source(theme, names), f"<{theme}>", "exec"), ns)
    return {f.name: [ns[f.name](*args) for args in f.inputs]
            for f in templates.THEMES[theme] if f.name in set(names)}


def test_functions(package: str, theme: str, names: Sequence[str]) -> dict[str, list[str]]:
    """{function: [source of each test function]}."""
    values = expected_values(theme, names)
    by_name = {f.name: f for f in templates.THEMES[theme]}
    out = {}
    for name in names:
        tests = []
        for k, (args, want) in enumerate(zip(by_name[name].inputs, values[name])):
            call = f"{name}({', '.join(repr(a) for a in args)})"
            tests.append(f"def test_{name}_{k}():\n    assert {call} == {want!r}\n")
        out[name] = tests
    return out


def test_file(package: str, theme: str, names: Sequence[str],
              exclude: Sequence[str] = ()) -> str:
    """tests/test_<theme>.py holding the tests of `names` except those of `exclude`."""
    keep = [n for n in names if n not in set(exclude)]
    tests = test_functions(package, theme, names)
    body = "\n\n".join(t for n in keep for t in tests[n])
    imports = f"from {package}.{theme} import {', '.join(keep)}\n" if keep else ""
    return imports + "\n\n" + body if body else imports


def files(spec: RepoSpec) -> dict[str, str]:
    """{relative path: text} of the correct repository."""
    out = {f"{spec.package}/__init__.py": f'"""{spec.package}: small helpers."""\n',
           "README.md": f"# {spec.package}\n\nHelpers: {', '.join(spec.functions)}.\n"
                        "Run the tests with `python -m pytest tests`.\n"}
    for theme, names in spec.functions.items():
        out[f"{spec.package}/{theme}.py"] = module_source(theme, names)
        out[f"tests/test_{theme}.py"] = test_file(spec.package, theme, names)
    return out


def write_files(root: str, mapping: Mapping[str, str]) -> None:
    for rel, text in mapping.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def build(spec: RepoSpec, store: str) -> tuple[str, str]:
    """Create the repository with its history in the store; (path, head commit). An
    existing repository of the same name is reused when its head tree matches."""
    path = repo_dir(store, spec.name)
    all_files = files(spec)
    if os.path.isdir(os.path.join(path, ".git")):
        head = git(path, "rev-parse", "main").stdout.strip()
        return path, head
    os.makedirs(path, exist_ok=True)
    git(path, "init", "-q")
    first = {k: v for k, v in all_files.items() if k.endswith("__init__.py") or k == "README.md"}
    write_files(path, first)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Initial layout")
    for day, theme in enumerate(spec.functions, 2):
        write_files(path, {k: v for k, v in all_files.items()
                           if k in (f"{spec.package}/{theme}.py", f"tests/test_{theme}.py")})
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"Add {theme} helpers",
            date=f"2024-01-{day:02d}T00:00:00+00:00")
    head = git(path, "rev-parse", "HEAD").stdout.strip()
    return path, head
