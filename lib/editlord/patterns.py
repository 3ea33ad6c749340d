"""AST differences between a source and a target, abstracted into code patterns.

Extraction (the offline stand-in for the paper's per-pair LM rule extraction):

    diff_regions(src, tgt) -> [(src_nodes, tgt_nodes)]

aligns statement lists with difflib (on `ast.dump`), descends into a pair of statements
whose headers agree (only their bodies differ) and into expressions where exactly one
non-leaf child differs, and stops at the smallest region that holds the whole change
(so `c in xs` vs `c in list(xs)` is one region, not `xs` vs `list(xs)`).

Abstraction (`pattern`): identifiers that are not builtins become `_`, constants other
than 0, 1, -1, True, False, None, '' and `...` become `_`, f-strings become `_`, expressions deeper than
`depth` below the region root become `_` (a builtin call there keeps its name:
`sorted(_)`), and every nested statement body becomes `...`. Patterns are code (they parse), and abstraction is idempotent,
so a pattern written in a rule book is matched by abstracting it again.

Occurrence (`occurrences`): the patterns of every expression and of every window of 1..4
consecutive statements of a program; "X occurs in the source" is `key(X) in
occurrences(source)`.
"""
from __future__ import annotations

import ast
import builtins
import copy
import difflib
import functools

BUILTINS = frozenset(dir(builtins))
KEPT_CONSTANTS = (0, 1, -1, True, False, None, "", Ellipsis)
DEPTH = 1
MAX_WINDOW = 4
_BODY_FIELDS = ("body", "orelse", "finalbody", "handlers")


def _kept(value) -> bool:
    return any(value is v or (type(value) is type(v) and value == v) for v in KEPT_CONSTANTS)


def _dump(x) -> str:
    if isinstance(x, list):
        return "[" + ",".join(_dump(y) for y in x) + "]"
    return ast.dump(x) if isinstance(x, ast.AST) else repr(x)


def _leaf(node) -> bool:
    return isinstance(node, (ast.Name, ast.Constant))


# ----------------------------------------------------------------------------- diff


def diff_regions(src: str | ast.AST, tgt: str | ast.AST) -> list[tuple[list, list]]:
    """Minimal differing regions (lists of statements, or one expression each side)."""
    a = ast.parse(src) if isinstance(src, str) else src
    b = ast.parse(tgt) if isinstance(tgt, str) else tgt
    out: list[tuple[list, list]] = []
    _diff_stmts(a.body, b.body, out)
    return out


def _diff_stmts(a: list, b: list, out) -> None:
    sm = difflib.SequenceMatcher(a=[_dump(s) for s in a], b=[_dump(s) for s in b],
                                 autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        A, B = a[i1:i2], b[j1:j2]
        if len(A) == len(B):              # statement-by-statement edits
            for x, y in zip(A, B):
                _diff_node(x, y, out)
        else:
            out.append((A, B))


def _diff_node(a, b, out) -> None:
    if type(a) is not type(b):
        out.append(([a], [b]))
        return
    fields = [f for f in a._fields if f not in ("type_comment", "lineno")]
    differing = [f for f in fields if _dump(getattr(a, f)) != _dump(getattr(b, f))]
    bodies = [f for f in differing if f in _BODY_FIELDS]
    other = [f for f in differing if f not in _BODY_FIELDS]
    if not other:
        for f in bodies:
            if f == "handlers":
                out.append(([a], [b]))
                return
            _diff_stmts(getattr(a, f), getattr(b, f), out)
        return
    if not bodies and len(other) == 1:
        va, vb = getattr(a, other[0]), getattr(b, other[0])
        if isinstance(va, ast.expr) and isinstance(vb, ast.expr) and not (_leaf(va) or _leaf(vb)):
            _diff_expr(va, vb, out)
            return
    out.append(([a], [b]))


def _diff_expr(a, b, out) -> None:
    if type(a) is not type(b) or _leaf(a) or _leaf(b):
        out.append(([a], [b]))
        return
    differing = [f for f in a._fields if _dump(getattr(a, f)) != _dump(getattr(b, f))]
    if len(differing) == 1:
        va, vb = getattr(a, differing[0]), getattr(b, differing[0])
        if isinstance(va, list) and isinstance(vb, list) and len(va) == len(vb):
            idx = [i for i in range(len(va)) if _dump(va[i]) != _dump(vb[i])]
            if len(idx) == 1:
                va, vb = va[idx[0]], vb[idx[0]]
        if (isinstance(va, ast.expr) and isinstance(vb, ast.expr)
                and not (_leaf(va) or _leaf(vb))):
            _diff_expr(va, vb, out)
            return
    out.append(([a], [b]))


# ----------------------------------------------------------------------------- abstraction


class _Abstract(ast.NodeTransformer):
    def __init__(self, depth: int):
        self.depth, self.level = depth, 0

    def visit(self, node):
        if isinstance(node, ast.expr):
            if self.level >= self.depth and not _leaf(node):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in BUILTINS and not node.keywords):
                    return ast.Call(ast.Name(node.func.id, ast.Load()),
                                    [ast.Name("_", ast.Load()) for _ in node.args], [])
                return ast.Name("_", ast.Load())
            self.level += 1
            try:
                return super().visit(node)
            finally:
                self.level -= 1
        if isinstance(node, ast.stmt):
            saved, self.level = self.level, 0
            try:
                return super().visit(node)
            finally:
                self.level = saved
        return super().visit(node)

    def visit_Name(self, node):
        return node if node.id in BUILTINS else ast.Name("_", node.ctx)

    def visit_arg(self, node):
        return ast.arg("_", None)

    def visit_Constant(self, node):
        return node if _kept(node.value) else ast.Name("_", ast.Load())

    def visit_JoinedStr(self, node):
        # an f-string is a string value like any other constant; its parts cannot hold
        # an abstracted `_` (ast.unparse rejects a Name inside JoinedStr)
        return ast.Name("_", ast.Load())

    def visit_FormattedValue(self, node):
        # a `{value:spec}` part of an f-string (reached alone by `occurrences`)
        return ast.Name("_", ast.Load())

    def visit_Call(self, node):
        # the called name does not count as a level (so `sorted(_)[0]` keeps `sorted`)
        func = node.func if isinstance(node.func, ast.Name) else self.visit(node.func)
        if isinstance(func, ast.Name) and func.id not in BUILTINS:
            func = ast.Name("_", ast.Load())
        args = [self.visit(a) for a in node.args]
        kws = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
        return ast.Call(func, args, kws)

    def generic_visit(self, node):
        node = super().generic_visit(node)
        for f in _BODY_FIELDS:
            body = getattr(node, f, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, f, [ast.Expr(ast.Constant(...))])
        return node


def pattern(nodes, depth: int = DEPTH) -> str:
    """Abstract code of a region (a list of statements, or expressions)."""
    nodes = [copy.deepcopy(n) for n in nodes]
    t = _Abstract(depth)
    nodes = [t.visit(n) for n in nodes]
    if nodes and isinstance(nodes[0], ast.stmt):
        return ast.unparse(ast.fix_missing_locations(ast.Module(nodes, [])))
    return "\n".join(ast.unparse(ast.fix_missing_locations(n)) for n in nodes)


@functools.lru_cache(maxsize=100_000)
def key(code: str, depth: int = DEPTH) -> str:
    """The pattern of a code snippet (a pattern's key is itself: idempotent).
    SyntaxError for text that does not parse."""
    tree = ast.parse(code)
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
        return pattern([tree.body[0].value], depth)
    return pattern(tree.body, depth)


@functools.lru_cache(maxsize=20_000)
def occurrences(code: str, depth: int = DEPTH) -> dict[str, int]:
    """How often each pattern occurs: every expression and every 1..MAX_WINDOW statement
    window of `code` (read-only; cached)."""
    tree = ast.parse(code)
    out: dict[str, int] = {}

    def add(p):
        out[p] = out.get(p, 0) + 1
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            add(pattern([node], depth))
        for f in _BODY_FIELDS:
            body = getattr(node, f, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                for i in range(len(body)):
                    for w in range(1, MAX_WINDOW + 1):
                        if i + w <= len(body):
                            add(pattern(body[i:i + w], depth))
    return out


def extract(src: str, tgt: str, depth: int = DEPTH) -> list[tuple[str, str]]:
    """(X, Y) pattern pairs, one per differing region, without pure renames (X == Y),
    empty sides, or sides longer than MAX_WINDOW statements (which could never be matched)."""
    out = []
    for a, b in diff_regions(src, tgt):
        if not a or not b or len(a) > MAX_WINDOW or len(b) > MAX_WINDOW:
            continue
        x, y = pattern(a, depth), pattern(b, depth)
        if x != y and (x, y) not in out:
            out.append((x, y))
    return out
