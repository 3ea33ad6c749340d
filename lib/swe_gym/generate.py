"""Repositories x AST mutations -> validated SWE-bench instances (SWE-bench's validation step).

For each repository (`repos.build`) and each sampled bug (one mutation, or a
`combination` of two in different functions):

  1. commit the bug on a branch `inst/<instance_id>` on top of `main`, with the tests of
     the mutated functions removed from the test files ("Refactor <functions>"): that
     commit is `base_commit`; `main` (the correct code) is `environment_setup_commit`;
  2. `patch` (gold) = the reverse diff: base -> correct source files (tests untouched);
     `test_patch` = base -> the complete test files (the regression tests come back);
  3. run the tests on base + test_patch and on base + gold + test_patch in the sandbox:
     FAIL_TO_PASS = tests PASSED after and not PASSED before; PASS_TO_PASS = PASSED in
     both. The instance is kept only when every test passes after the gold patch, F2P is
     non-empty, and the grader itself says FULL for the gold patch and NO for the empty
     patch (both answered from the test cache: the trees are identical);
  4. `problem_statement` from the failing behaviour: the failing assertions (a runnable
     reproduction) and the observed pytest messages, or text written by a served LM
     (`statement_lm`) from the same facts.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
from collections.abc import Sequence

import numpy as np

from lib import sandbox
from lib.swe_gym import grader, mutations, repos, runtime, templates


@dataclasses.dataclass
class GenStats:
    candidates: int = 0
    kept: int = 0
    rejected: dict = dataclasses.field(default_factory=dict)

    def reject(self, why: str) -> None:
        self.rejected[why] = self.rejected.get(why, 0) + 1


def _sample_bug(rng, by_kind: dict[str, list], kind: str) -> list[mutations.Mutation] | None:
    if kind != "combination":
        pool = by_kind.get(kind) or []
        return [pool[rng.integers(len(pool))]] if pool else None
    kinds = [k for k in mutations.KINDS if by_kind.get(k)]
    if not kinds:
        return None
    first = by_kind[kinds[rng.integers(len(kinds))]]
    a = first[rng.integers(len(first))]
    others = [m for k in kinds for m in by_kind[k] if m.func != a.func]
    if not others:
        return None
    return [a, others[rng.integers(len(others))]]


def _test_sources(test_text: str) -> dict[str, str]:
    """{test function name: its assert line(s)} of a generated test file."""
    tree = ast.parse(test_text)
    return {n.name: "\n".join(ast.get_source_segment(test_text, s) for s in n.body)
            for n in tree.body if isinstance(n, ast.FunctionDef)}


def problem_statement(spec: repos.RepoSpec, bug: Sequence[mutations.Mutation], f2p: list[str],
                      messages: dict[str, str], test_texts: dict[str, str],
                      max_examples: int = 2) -> str:
    """An issue text from the failing behaviour (module docstring, step 4). It names the
    functions whose tests fail and shows their failing assertions as a reproduction; it
    does not say where the bug is or what kind it is."""
    by_func: dict[tuple[str, str], list[str]] = {}
    for t in f2p:
        path, name = t.split("::")
        theme = os.path.basename(path)[len("test_"):-3]
        func = re.sub(r"_\d+$", "", name[len("test_"):])
        by_func.setdefault((theme, func), []).append(t)
    mutated = {m.func for m in bug}
    order = sorted(by_func, key=lambda k: (k[1] not in mutated, k))
    funcs = [f for _, f in order]
    title = f"`{funcs[0]}` returns wrong results" if len(funcs) == 1 else \
        f"Wrong results from {', '.join(f'`{f}`' for f in funcs[:3])}"
    parts = [title, ""]
    for theme, func in order[:2]:
        doc = next((f.source.split('"""')[1] for f in templates.THEMES[theme] if f.name == func), "")
        parts.append(f"`{spec.package}.{theme}.{func}` does not do what its docstring says "
                     f"(\"{doc}\"). Reproduction:")
        parts.append("```python")
        parts.append(f"from {spec.package}.{theme} import {func}")
        shown = by_func[(theme, func)][:max_examples]
        for t in shown:
            path, name = t.split("::")
            parts.append(test_texts[path].get(name, f"# {name}"))
        parts.append("```")
        msg = messages.get(shown[0], "")
        if msg:
            parts.append(f"fails with: `{msg}`")
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def _statement_by_lm(lm, facts: str) -> str:
    reply = lm.chat([{"role": "system", "content": "You write concise GitHub issues."},
                     {"role": "user", "content": "Write a bug report (title line, then body) "
                      "for these failing checks. Do not guess the cause.\n\n" + facts}],
                    temperature=0.0, max_tokens=400, seed=0)
    text = reply.texts[0].strip()
    if not text:
        raise ValueError("the statement LM returned an empty issue text")
    return text + "\n"


def _commit_state(path: str, files: dict[str, str], message: str, branch: str,
                  date: str) -> str:
    repos.git(path, "checkout", "-q", "-B", branch, "main")
    repos.write_files(path, files)
    repos.git(path, "add", "-A")
    repos.git(path, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return repos.git(path, "rev-parse", "HEAD").stdout.strip()


def _diff_to(path: str, files: dict[str, str]) -> str:
    """Diff of the current HEAD -> HEAD with `files` written (then restored)."""
    repos.write_files(path, files)
    repos.git(path, "add", "-A")
    out = repos.git(path, "diff", "--cached", "--no-color", "HEAD").stdout
    repos.git(path, "reset", "-q", "--hard", "HEAD")
    return out


def generate_repo(spec: repos.RepoSpec, store: str, *, num_candidates: int, kinds: Sequence[str],
                  seed: int, cache: runtime.TestCache, limits: sandbox.Limits = runtime.DEFAULT_LIMITS,
                  statement_lm=None, stats: GenStats | None = None) -> list[dict]:
    """Validated instances of one repository (module docstring)."""
    stats = stats if stats is not None else GenStats()
    path, env_commit = repos.build(spec, store)
    correct = repos.files(spec)
    test_texts = {f"tests/test_{t}.py": _test_sources(correct[f"tests/test_{t}.py"])
                  for t in spec.functions}
    by_kind: dict[str, list] = {}
    for theme in spec.functions:
        rel = f"{spec.package}/{theme}.py"
        for m in mutations.sites(correct[rel], rel):
            by_kind.setdefault(m.kind, []).append(m)
    rng = np.random.default_rng([seed, sum(map(ord, spec.package))])
    out, seen = [], set()
    for k in range(num_candidates):
        kind = kinds[rng.integers(len(kinds))]
        bug = _sample_bug(rng, by_kind, kind)
        stats.candidates += 1
        if bug is None:
            stats.reject("no site")
            continue
        key = tuple(sorted((m.path, m.lineno, m.col, m.new) for m in bug))
        if key in seen:
            stats.reject("duplicate")
            continue
        seen.add(key)
        buggy = {}
        try:
            for rel in sorted({m.path for m in bug}):
                buggy[rel] = mutations.apply(correct[rel], [m for m in bug if m.path == rel])
        except ValueError:
            stats.reject("overlapping")
            continue
        if not all(mutations.compiles(s) for s in buggy.values()):
            stats.reject("syntax")
            continue
        hidden = {m.func for m in bug}
        base_tests = {f"tests/test_{t}.py": repos.test_file(spec.package, t, names, exclude=hidden)
                      for t, names in spec.functions.items()}
        iid = f"{spec.name.replace('/', '__')}-{k:04d}"
        funcs = ", ".join(sorted(hidden))
        base = _commit_state(path, {**buggy, **base_tests}, f"Refactor {funcs}",
                             f"inst/{iid}", f"2024-02-01T{k % 24:02d}:00:00+00:00")
        gold = _diff_to(path, {rel: correct[rel] for rel in buggy})
        test_patch = _diff_to(path, {rel: correct[rel] for rel in base_tests})
        repos.git(path, "checkout", "-q", "main")
        if not test_patch.strip():
            stats.reject("no hidden tests")
            continue
        with runtime.Workspace.checkout(store, spec.name, base) as ws:
            ws.apply_patch(test_patch)
            targets = sorted(base_tests)
            before = runtime.run_tests(ws.path, targets, limits=limits, cache=cache)
            ws.apply_patch(gold)
            after = runtime.run_tests(ws.path, targets, limits=limits, cache=cache)
        if before.error:
            stats.reject(f"buggy state: {before.error}")
            continue
        if after.error or not after.status or any(s != "PASSED" for s in after.status.values()):
            stats.reject("gold state not clean")
            continue
        f2p = sorted(t for t, s in after.status.items() if before.status.get(t) != "PASSED")
        p2p = sorted(t for t, s in after.status.items() if before.status.get(t) == "PASSED")
        if not f2p:
            stats.reject("equivalent mutant (no failing test)")
            continue
        statement = problem_statement(spec, bug, f2p, before.messages, test_texts)
        if statement_lm is not None:
            statement = _statement_by_lm(statement_lm, statement)
        record = {"repo": spec.name, "instance_id": iid, "base_commit": base, "patch": gold,
                  "test_patch": test_patch, "problem_statement": statement, "hints_text": "",
                  "created_at": f"2024-02-01T{k % 24:02d}:00:00Z", "version": "0.1",
                  "FAIL_TO_PASS": json.dumps(f2p), "PASS_TO_PASS": json.dumps(p2p),
                  "environment_setup_commit": env_commit,
                  "mutations": [m.to_dict() for m in bug],
                  "bug_kind": kind}
        if not grader.grade(record, gold, store, limits=limits, cache=cache).resolved:
            stats.reject("gold patch not FULL")
            continue
        if grader.grade(record, "", store, limits=limits, cache=cache).resolution != "NO":
            stats.reject("empty patch resolves")
            continue
        stats.kept += 1
        out.append(record)
    return out


def generate(specs: Sequence[repos.RepoSpec], store: str, *, per_repo: int, kinds: Sequence[str],
             seed: int, cache: runtime.TestCache, limits: sandbox.Limits = runtime.DEFAULT_LIMITS,
             statement_lm=None, progress=None) -> tuple[list[dict], GenStats]:
    """Instances of every repository, and the validation statistics."""
    stats, out = GenStats(), []
    for i, spec in enumerate(specs):
        out.extend(generate_repo(spec, store, num_candidates=per_repo, kinds=kinds, seed=seed,
                                 cache=cache, limits=limits, statement_lm=statement_lm,
                                 stats=stats))
        if progress:
            progress(i + 1, len(specs), len(out))
    return out, stats
