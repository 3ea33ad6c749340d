"""Code domain: HumanEval problems with candidate programs graded by their tests in the sandbox.

Offline there is no code-generating model, so a pool is built from the canonical solution
and AST mutants of it (the notes' proposal): each mutant changes one site chosen at random
among comparison operators (< <= > >= == !=, one replaced by another), arithmetic operators (+ - * // %)
swapped, integer constants (+1 / -1) and boolean constants / `and`/`or`. Every
candidate is graded by running the problem's tests (lib/data/humaneval.py, sandboxed), so a
mutant that happens to stay correct (an equivalent mutant) is scored correct. Position 0
of the pool plays "greedy" and is a random candidate (the pool is shuffled), so "greedy"
here is the expected score of an arbitrary pick, and `pool_from_texts` builds pools from a
served model's real samples (generators.make_pools) instead. The response text shown to
judges is the whole function (prompt + body).
"""
from __future__ import annotations

import ast

import numpy as np

from lib.data import humaneval as he
from lib.jetts.pools import Pool, Query, Response

NAME = "humaneval"
_CMP = [ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq]
_BIN = [ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod]


def make_query(p: he.Problem) -> Query:
    return Query(p.task_id, p.prompt, NAME, {"task_id": p.task_id})


def _sites(tree: ast.AST) -> list[tuple[ast.AST, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            out += [(node, f"cmp{i}") for i in range(len(node.ops))]
        elif isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            out.append((node, "bin"))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            out.append((node, "int"))
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            out.append((node, "bool"))
        elif isinstance(node, ast.BoolOp):
            out.append((node, "boolop"))
    return out


def mutate(source: str, rng: np.random.Generator) -> str | None:
    """`source` with one random mutation (module docstring); None when nothing to mutate."""
    tree = ast.parse(source)
    sites = _sites(tree)
    if not sites:
        return None
    node, kind = sites[int(rng.integers(0, len(sites)))]
    if kind.startswith("cmp"):
        i = int(kind[3:])
        choices = [c for c in _CMP if c is not type(node.ops[i])]
        node.ops[i] = choices[int(rng.integers(0, len(choices)))]()
    elif kind == "bin":
        choices = [c for c in _BIN if c is not type(node.op)]
        node.op = choices[int(rng.integers(0, len(choices)))]()
    elif kind == "int":
        node.value = node.value + (1 if rng.random() < 0.5 else -1)
    elif kind == "bool":
        node.value = not node.value
    else:
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    return ast.unparse(tree)


def candidates(p: he.Problem, size: int, rng: np.random.Generator) -> list[str]:
    """`size` distinct whole programs: the canonical one and mutants (fewer if the solution
    has too few distinct mutants)."""
    base = ast.unparse(ast.parse(p.prompt + p.canonical_solution))
    out, seen = [base], {base}
    for _ in range(20 * size):
        if len(out) >= size:
            break
        m = mutate(base, rng)
        if m is not None and m not in seen:
            seen.add(m)
            out.append(m)
    return out


def pool_from_texts(p: he.Problem, programs: list[str], greedy_index: int = 0,
                    limits=he.DEFAULT_LIMITS) -> Pool:
    """Grade each whole program in the sandbox; `greedy_index` marks the greedy one."""
    return Pool(make_query(p), [Response(t, float(he.grade_program(p, t, limits).passed),
                                         greedy=(i == greedy_index))
                                for i, t in enumerate(programs)])


def make_pools(num_problems: int, size: int, seed: int) -> list[Pool]:
    """Mutant pools of the first `num_problems` HumanEval problems, each shuffled."""
    rng = np.random.default_rng(seed)
    pools = []
    for p in he.load(limit=num_problems):
        progs = candidates(p, size, rng)
        order = rng.permutation(len(progs))
        pools.append(pool_from_texts(p, [progs[i] for i in order]))
    return pools


def grade(q: Query, text: str) -> float:
    return float(he.grade_program(he.get(q.meta["task_id"]), text).passed)
