"""Synthetic line-repair conversations: the workspace LM's pre-training (its "base model").

The paper fine-tunes pre-trained code models (Qwen2.5-Coder); a model trained from scratch
here has never seen code, so before any agent data it is pre-trained on conversations in
exactly the workspace-LM policy's format (policies.compact_prompt / demonstration), made
without running anything:

    user:       assert f(<args of one template input>) == <expected>
                N| <line N of f, with one injected single-line bug>   (all lines of f)
    assistant:  fix(line=N_bug, op=<the op of policies.OPS that restores the line>)
    tool:       REPRO 1/1
    assistant:  finish()

drawn from the training repositories' modules only (never the held-out ones). The bug
kinds are those of mutations.py that change one line (a dropped branch removes lines,
which one line edit cannot restore, and is left out).
"""
from __future__ import annotations

import ast
from collections.abc import Sequence

import numpy as np

from lib.swe_gym import mutations, policies, repos, templates

LINE_KINDS = ("flip_comparison", "off_by_one", "wrong_default", "swapped_arguments")


def examples(specs: Sequence[repos.RepoSpec], num: int, seed: int) -> list[list[dict]]:
    """`num` conversations (module docstring) from the modules of `specs`."""
    rng = np.random.default_rng(seed)
    pool = []      # (module source, function node, theme)
    for spec in specs:
        for theme, names in spec.functions.items():
            src = repos.module_source(theme, names)
            values = repos.expected_values(theme, names)
            tree = ast.parse(src)
            for fn in tree.body:
                if isinstance(fn, ast.FunctionDef):
                    sites = [m for m in mutations.sites(src, "m.py", LINE_KINDS)
                             if m.func == fn.name and m.lineno == m.end_lineno]
                    if sites:
                        pool.append((src, fn, theme, sites, values[fn.name]))
    if not pool:
        raise ValueError("no mutation sites in the given repositories")
    out = []
    for _ in range(50 * num):
        if len(out) == num:
            break
        src, fn, theme, sites, vals = pool[rng.integers(len(pool))]
        m = sites[rng.integers(len(sites))]
        bug = mutations.apply(src, [m]).splitlines()
        good = src.splitlines()
        func = next(f for f in templates.THEMES[theme] if f.name == fn.name)
        k = int(rng.integers(len(func.inputs)))
        check = f"assert {fn.name}({', '.join(repr(a) for a in func.inputs[k])}) == {vals[k]!r}"
        lines = [(n, bug[n - 1]) for n in range(fn.lineno, fn.end_lineno + 1)
                 if bug[n - 1].strip() and not bug[n - 1].strip().startswith('"""')][:12]
        if m.lineno not in {n for n, _ in lines}:
            continue
        op = policies.op_for(dict(enumerate(bug, 1)), m.lineno, good[m.lineno - 1])
        if op is None:
            continue
        prompt = policies.format_prompt(check, lines)
        edit = {"line": m.lineno, "op": op, "repro": "REPRO 1/1"}
        out.append(policies.demonstration(prompt, [edit]))
    return out
