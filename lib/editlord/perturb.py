"""Semantics-preserving perturbations of the code to edit (the robustness metric).

    rename(code, seed)      local variables (assigned names, loop targets, comprehension
                            targets; never parameters, globals, builtins or attributes)
                            renamed to fresh names, consistently
    dead_code(code, seed)   an unreachable `if False:` block (an assignment to a fresh
                            name) inserted at the start of the function body
    reorder(code, seed)     two adjacent simple assignments that neither read nor write
                            each other's names swapped (None when there is no such pair)

Each returns the new code or None when the perturbation has no site. The editing
robustness metric is the drop in a metric between clean and perturbed inputs; the
experiment keeps only perturbed inputs whose HumanEval tests still give the same outcome
as the clean input (so "preserving" is checked, not assumed).
"""
from __future__ import annotations

import ast
import builtins
import copy
import random

KINDS = ("rename", "dead_code", "reorder")
_FRESH = ("val", "item", "tmp", "cur", "acc", "elem", "node", "part", "aux", "q")


def _function(tree: ast.Module) -> ast.FunctionDef:
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not fns:
        raise ValueError("no function to perturb")
    return fns[-1]


def _locals(fn: ast.FunctionDef) -> list[str]:
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    out = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in params:
            if n.id not in out:
                out.append(n.id)
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return []
    return out


def rename(code: str, seed: int = 0) -> str | None:
    tree = ast.parse(code)
    fn = _function(tree)
    names = _locals(fn)
    if not names:
        return None
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} | set(dir(builtins))
    rng = random.Random(seed)
    pool = [f"{b}_{rng.randrange(10, 99)}" for b in _FRESH]
    rng.shuffle(pool)
    mapping = {}
    for n in names:
        new = next(p for p in pool if p not in used and p not in mapping.values())
        mapping[n] = new
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in mapping:
            n.id = mapping[n.id]
        elif isinstance(n, ast.arg) and n.arg in mapping:
            n.arg = mapping[n.arg]
    return ast.unparse(tree)


def dead_code(code: str, seed: int = 0) -> str | None:
    tree = ast.parse(code)
    fn = _function(tree)
    rng = random.Random(seed)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    name = next(f"unused_{i}" for i in range(100) if f"unused_{i}" not in used)
    block = ast.If(ast.Constant(False),
                   [ast.Assign([ast.Name(name, ast.Store())], ast.Constant(rng.randrange(100)))],
                   [])
    fn.body.insert(0, block)
    return ast.unparse(ast.fix_missing_locations(tree))


def _reads_writes(stmt) -> tuple[set, set]:
    reads = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    writes = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return reads, writes


def _pure(stmt) -> bool:
    return (isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)
            and not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.NamedExpr))
                        for n in ast.walk(stmt.value)))


def reorder(code: str, seed: int = 0) -> str | None:
    tree = ast.parse(code)
    sites = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if _pure(a) and _pure(b):
                ra, wa = _reads_writes(a)
                rb, wb = _reads_writes(b)
                if not (wa & (rb | wb)) and not (wb & ra):
                    sites.append((body, i))
    if not sites:
        return None
    body, i = random.Random(seed).choice(sites)
    body[i], body[i + 1] = body[i + 1], body[i]
    return ast.unparse(tree)


def perturb(kind: str, code: str, seed: int = 0) -> str | None:
    if kind not in KINDS:
        raise ValueError(f"unknown perturbation {kind!r}; known: {KINDS}")
    return {"rename": rename, "dead_code": dead_code, "reorder": reorder}[kind](
        copy.copy(code), seed)
