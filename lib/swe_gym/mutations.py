"""Procedural bug injection by AST mutation (SWE-smith style, as the notes propose).

`sites(source, path)` lists every single-site mutation of a module as a `Mutation`
(a replacement of one source span, found through the AST, applied as text so the rest of
the file keeps its formatting and the gold patch is a small diff):

    flip_comparison   one operator of a comparison: < <-> <=, > <-> >=, == <-> !=, in <-> not in
    off_by_one        an integer literal c -> c + 1 or c - 1 (arithmetic, indices, ranges, compares)
    dropped_branch    an `if` statement without `else` deleted (its block keeps >= 1 statement),
                      or the last `elif` branch of a chain deleted
    wrong_default     a literal default argument changed (int +-1, str <-> "", bool negated, None -> 0)
    swapped_arguments the first two positional arguments of a call exchanged

A combination is two mutations in different functions applied together (`apply`).
The same enumerator run on buggy code is the search baseline's proposal set: flips and
swaps are their own inverses and +-1 covers the inverse of an off-by-one.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
from collections.abc import Sequence

KINDS = ("flip_comparison", "off_by_one", "dropped_branch", "wrong_default", "swapped_arguments")
ALL_KINDS = KINDS + ("combination",)

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
         ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
         ast.Is: ast.IsNot, ast.IsNot: ast.Is}


@dataclasses.dataclass(frozen=True)
class Mutation:
    """Replace the text between (lineno, col) and (end_lineno, end_col) (1-based lines,
    0-based columns, as `ast` reports them) of `path` by `new`; `old` is the text there."""
    kind: str
    path: str
    func: str
    lineno: int
    col: int
    end_lineno: int
    end_col: int
    old: str
    new: str

    def describe(self) -> str:
        return f"{self.kind} in {self.func} ({self.path}:{self.lineno}): {self.old!r} -> {self.new!r}"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _offset(lines: list[str], lineno: int, col: int) -> int:
    return sum(len(x) for x in lines[:lineno - 1]) + col


def segment(source: str, m: Mutation) -> str:
    lines = source.splitlines(keepends=True)
    return source[_offset(lines, m.lineno, m.col):_offset(lines, m.end_lineno, m.end_col)]


def apply(source: str, mutations: Sequence[Mutation]) -> str:
    """`source` with non-overlapping mutations applied; ValueError when a span does not hold
    the expected `old` text or two spans overlap."""
    lines = source.splitlines(keepends=True)
    spans = sorted(((_offset(lines, m.lineno, m.col), _offset(lines, m.end_lineno, m.end_col), m)
                    for m in mutations), key=lambda s: s[0])
    for (a0, a1, _), (b0, _b1, _) in zip(spans, spans[1:]):
        if b0 < a1:
            raise ValueError("overlapping mutations")
    out = source
    for start, end, m in reversed(spans):
        if out[start:end] != m.old:
            raise ValueError(f"mutation {m.describe()} does not match the source "
                             f"(found {out[start:end]!r})")
        out = out[:start] + m.new + out[end:]
    return out


def _node_span(node) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def _whole_lines(lines: list[str], first: int, last: int) -> tuple[int, int, int, int, str]:
    """Span covering lines first..last (1-based, inclusive) with their newlines."""
    text = "".join(lines[first - 1:last])
    if last < len(lines):
        return first, 0, last + 1, 0, text
    return first, 0, last, len(lines[last - 1]), text


def _literal_alternatives(value) -> list:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, str):
        return ["" if value else " "] + (["-"] if value not in ("-", "") else [])
    if value is None:
        return [0]
    return []


def sites(source: str, path: str, kinds: Sequence[str] = KINDS) -> list[Mutation]:
    """Every single-site mutation of `source` whose kind is in `kinds`, inside functions."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out: list[Mutation] = []

    def add(kind, func, node_or_span, new):
        span = node_or_span if isinstance(node_or_span, tuple) else _node_span(node_or_span)
        m = Mutation(kind, path, func, *span[:4], old="", new=new)
        m = dataclasses.replace(m, old=segment(source, m))
        if m.old != m.new:
            out.append(m)

    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        name = fn.name
        if "wrong_default" in kinds:
            for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
                if isinstance(d, ast.Constant):
                    for alt in _literal_alternatives(d.value):
                        add("wrong_default", name, d, repr(alt))
        for node in ast.walk(fn):
            if "flip_comparison" in kinds and isinstance(node, ast.Compare):
                for i, op in enumerate(node.ops):
                    if type(op) in _FLIP:
                        new = copy.deepcopy(node)
                        new.ops[i] = _FLIP[type(op)]()
                        add("flip_comparison", name, node, ast.unparse(new))
            if "off_by_one" in kinds and isinstance(node, ast.Constant) \
                    and type(node.value) is int and node not in fn.args.defaults:
                for alt in (node.value + 1, node.value - 1):
                    add("off_by_one", name, node, repr(alt))
            if "swapped_arguments" in kinds and isinstance(node, ast.Call) and len(node.args) >= 2 \
                    and not any(isinstance(a, ast.Starred) for a in node.args[:2]) \
                    and node.lineno == node.end_lineno:
                new = copy.deepcopy(node)
                new.args[0], new.args[1] = new.args[1], new.args[0]
                if ast.unparse(node.args[0]) != ast.unparse(node.args[1]):
                    add("swapped_arguments", name, node, ast.unparse(new))
            if "dropped_branch" in kinds:
                for field in ("body", "orelse"):
                    block = getattr(node, field, None)
                    if not isinstance(block, list) or len(block) < 2:
                        continue
                    for stmt in block:
                        if isinstance(stmt, ast.If) and not stmt.orelse:
                            add("dropped_branch", name,
                                _whole_lines(lines, stmt.lineno, stmt.end_lineno)[:4], "")
                if isinstance(node, ast.If) and len(node.orelse) == 1 \
                        and isinstance(node.orelse[0], ast.If) and not node.orelse[0].orelse:
                    elif_ = node.orelse[0]
                    if lines[elif_.lineno - 1].lstrip().startswith("elif"):
                        add("dropped_branch", name,
                            _whole_lines(lines, elif_.lineno, elif_.end_lineno)[:4], "")
    # a dropped default must not be counted again as an off-by-one; dedupe identical edits
    seen, unique = set(), []
    for m in out:
        key = (m.kind, m.lineno, m.col, m.end_lineno, m.end_col, m.new)
        if key not in seen:
            seen.add(key)
            unique.append(m)
    return unique


def compiles(source: str) -> bool:
    try:
        ast.parse(source)
        return True
    except SyntaxError:
        return False
