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

Step trees for beam search (`make_trees`), built the same way: the entry point's body
(after its docstring) is cut into `depth` contiguous line chunks (fewer when the body has
fewer lines); a step is one chunk, written either as in the canonical solution (probability
`keep`) or as one of that chunk's single-site mutants (whole-program mutants whose changed
lines all fall in the chunk). The root has N children, every inner node M, the first child
is the "greedy" one (a draw like the others, as position 0 of a pool); a node's text is the
program up to its chunks, a leaf's the whole program, graded in the sandbox (a leaf with
mutants in several chunks is a multi-site mutant).
"""
from __future__ import annotations

import ast

import numpy as np

from lib.data import humaneval as he
from lib.jetts.pools import Node, Pool, Query, Response, Tree, propagate_scores

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


def body_chunks(source: str, entry_point: str, depth: int) -> tuple[list[str], list[list[str]],
                                                                     list[str]]:
    """(head lines, body chunks, tail lines) of a whole program: the body of `entry_point`
    after its docstring, cut into min(depth, body lines) contiguous chunks of lines."""
    tree = ast.parse(source)
    fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point]
    if not fn:
        raise ValueError(f"program defines no top-level function {entry_point!r}")
    fn = fn[-1]
    body = fn.body
    if (len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]
    lines = source.split("\n")
    start, end = body[0].lineno - 1, fn.end_lineno
    idx = np.array_split(np.arange(start, end), min(depth, end - start))
    return lines[:start], [[lines[i] for i in c] for c in idx], lines[end:]


def chunk_mutants(source: str, chunks: list[list[str]], head: int, rng: np.random.Generator,
                  tries: int) -> list[list[tuple[str, ...]]]:
    """Per chunk, the distinct mutated versions of its lines from `tries` single-site
    mutants of `source` whose changed lines all lie in that chunk (`head` lines before it)."""
    base = source.split("\n")
    bounds, at = [], head
    for c in chunks:
        bounds.append((at, at + len(c)))
        at += len(c)
    out: list[list[tuple[str, ...]]] = [[] for _ in chunks]
    for _ in range(tries):
        m = mutate(source, rng)
        lines = m.split("\n") if m is not None else []
        if len(lines) != len(base):
            continue
        diff = [i for i, (a, b) in enumerate(zip(base, lines)) if a != b]
        for k, (lo, hi) in enumerate(bounds):
            if diff and all(lo <= i < hi for i in diff):
                v = tuple(lines[lo:hi])
                if v not in out[k]:
                    out[k].append(v)
    return out


def make_tree(p: he.Problem, n: int, m: int, depth: int, keep: float, rng: np.random.Generator,
              graded: dict | None = None, limits=he.DEFAULT_LIMITS) -> Tree:
    """A full step tree (N root children, M per inner node, depth min(depth, body lines));
    leaves graded in the sandbox (`graded`: a text -> score cache shared across calls)."""
    graded = {} if graded is None else graded
    base = ast.unparse(ast.parse(p.prompt + p.canonical_solution))
    head, chunks, tail = body_chunks(base, p.entry_point, depth)
    variants = chunk_mutants(base, chunks, len(head), rng, tries=30 * len(chunks))
    d = len(chunks)

    def draw(k: int) -> list[str]:
        if not variants[k] or rng.random() < keep:
            return chunks[k]
        return list(variants[k][int(rng.integers(0, len(variants[k])))])

    nodes = [Node(-1, 0, "\n".join(head), [], False, 0.0)]
    steps = {0: []}
    frontier = [0]
    for t in range(d):
        nxt = []
        for i in frontier:
            for c in range(n if t == 0 else m):
                st = steps[i] + [draw(t)]
                leaf = t == d - 1
                text = "\n".join(head + [ln for ch in st for ln in ch] + (tail if leaf else []))
                nodes.append(Node(i, t + 1, text, [], leaf, 0.0, greedy=(c == 0)))
                j = len(nodes) - 1
                nodes[i].children.append(j)
                steps[j] = st
                nxt.append(j)
        frontier = nxt
    for nd in nodes:
        if nd.leaf:
            if nd.text not in graded:
                graded[nd.text] = float(he.grade_program(p, nd.text, limits).passed)
            nd.score = graded[nd.text]
    propagate_scores(nodes)
    for nd in nodes[1:]:
        j = nd
        while not j.leaf:
            j = nodes[next(c for c in j.children if nodes[c].greedy)]
        nd.rollout, nd.rollout_score = j.text, j.score
    return Tree(make_query(p), nodes, n, m, d)


def make_trees(num_problems: int, n: int, m: int, depth: int, keep: float,
               seed: int) -> list[Tree]:
    """Step trees of the first `num_problems` HumanEval problems (`make_tree`)."""
    rng = np.random.default_rng([seed, 11])
    return [make_tree(p, n, m, depth, keep, rng) for p in he.load(limit=num_problems)]
