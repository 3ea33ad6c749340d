"""Identifier abstraction: the editor edits code whose own names are canonical placeholders.

Program-repair work (Tufano et al. 2019, "An empirical study on learning bug-fixing
patches"; SequenceR) abstracts identifiers before a sequence model sees the code, so that
copying an unseen name becomes copying a token of a small closed vocabulary. Here:

    abstract(code)              -> (abstract code, mapping {concrete name: placeholder})
    abstract(target, mapping)   -> the target under the SAME mapping, extended by the
                                   target's new names (a training pair stays one edit)
    concretise(code, mapping)   -> (code with placeholders mapped back, invented names)

The names abstracted are those the unit itself binds: the function's name and nested
`def` names (placeholders `f0, f1, ...`), parameters, lambda arguments, assignment / loop /
comprehension / `with` / walrus / `except ... as` targets and `nonlocal` names (`v0, v1,
...`), numbered in order of first occurrence in the text. Never renamed: builtins,
globals and imported names the unit only reads, attribute names (`x.attr`), keyword
names in calls (`f(key=...)`), and, because they cannot be renamed without changing
behaviour, names bound by `global`, `import` and `match` patterns, names bound inside a
`class` body, parameters passed by keyword to a `def` of the unit (`f(n=1)` in a
recursive call); and nothing at all when the unit looks names up by string (`exec`, or
`locals`, `vars`, `globals`, `dir`, `eval` without arguments; `_introspective`). A
placeholder never equals any identifier of the code (names, attributes, keywords,
imports), so the inverse map is unambiguous.

The codes are in `ast.unparse` normal form (every pair and corpus sample is), so
`concretise(abstract(src)[0], mapping)[0] == src` exactly (tested on every HumanEval pair
and a corpus sample). Renaming a local is invisible after abstraction (`perturb.rename`
only renames locals, keeping the order of first occurrence): the rename perturbation of
the robustness metric becomes nearly a no-op for every editor that sees abstract code.
"""
from __future__ import annotations

import ast
import re

PLACEHOLDER = re.compile(r"[fv]\d+\Z")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_INTROSPECTIVE = frozenset({"locals", "vars", "globals", "exec", "eval", "dir"})


def identifiers(tree: ast.AST) -> set[str]:
    """Every identifier the code spells: names, arguments, attributes, keyword names,
    def / class names, import names, global / nonlocal names, except-as names."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
        elif isinstance(n, (*_DEFS, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.update(p for p in (n.name.split(".")[0], n.asname) if p)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
    return out


def _introspective(tree: ast.AST) -> bool:
    """Does the code look names up by string (`locals()`, `vars()`, `eval(...)`, ...)? Then
    renaming could change its behaviour, and nothing is renamed. `eval` with an argument
    evaluates a string the unit built (the `eval_int` rule), which never names a local of
    the unit in the library's rules, so only argument-less calls and `exec` count."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _INTROSPECTIVE:
            if n.func.id == "exec" or not (n.args or n.keywords):
                return True
    return False


def _in_class(tree: ast.AST) -> set[int]:
    """ids of the nodes inside a class body (their bindings are class attributes)."""
    inside: set[int] = set()
    for c in ast.walk(tree):
        if isinstance(c, ast.ClassDef):
            for s in c.body:
                inside.update(id(n) for n in ast.walk(s))
    return inside


def _bindings(tree: ast.AST) -> tuple[dict[str, str], set[str]]:
    """({renamable name: "f" | "v"}, names that must keep their spelling)."""
    kinds: dict[str, str] = {}
    keep: set[str] = set()
    in_class = _in_class(tree)
    for n in ast.walk(tree):
        if id(n) in in_class:
            keep.update(_bound_here(n))
            continue
        if isinstance(n, _DEFS):
            kinds[n.name] = "f"
        elif isinstance(n, ast.ClassDef):
            keep.add(n.name)
        elif isinstance(n, ast.alias):
            keep.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.Global):
            keep.update(n.names)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            keep.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            keep.add(n.rest)
        else:
            for name in _bound_here(n):
                kinds.setdefault(name, "v")
    defs = {k for k, v in kinds.items() if v == "f"}
    for n in ast.walk(tree):                       # keyword arguments of the unit's own defs
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs:
            keep.update(k.arg for k in n.keywords if k.arg)
    return kinds, keep


def _bound_here(n: ast.AST) -> list[str]:
    if isinstance(n, ast.arg):
        return [n.arg]
    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
        return [n.id]
    if isinstance(n, ast.ExceptHandler) and n.name:
        return [n.name]
    if isinstance(n, ast.Nonlocal):
        return list(n.names)
    if isinstance(n, (*_DEFS, ast.ClassDef)):
        return [n.name]
    return []


def _occurrences(tree: ast.AST, names: set[str]) -> list[str]:
    """`names` in order of first occurrence in the text (by line, column)."""
    pos: dict[str, tuple[int, int]] = {}
    for n in ast.walk(tree):
        for name in _spelled(n):
            if name in names:
                p = (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))
                pos[name] = min(pos.get(name, p), p)
    return sorted(pos, key=lambda k: (pos[k], k))


def _spelled(n: ast.AST) -> list[str]:
    """The renamable identifiers a node spells itself (not those of its children)."""
    if isinstance(n, ast.Name):
        return [n.id]
    if isinstance(n, ast.arg):
        return [n.arg]
    if isinstance(n, _DEFS):
        return [n.name]
    if isinstance(n, ast.ExceptHandler) and n.name:
        return [n.name]
    if isinstance(n, ast.Nonlocal):
        return list(n.names)
    return []


def _rename(tree: ast.AST, mapping: dict[str, str]) -> None:
    """Rename, in place, every occurrence `_spelled` lists (keyword names, attributes,
    imports and class names are never touched)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id in mapping:
            n.id = mapping[n.id]
        elif isinstance(n, ast.arg) and n.arg in mapping:
            n.arg = mapping[n.arg]
        elif isinstance(n, _DEFS) and n.name in mapping:
            n.name = mapping[n.name]
        elif isinstance(n, ast.ExceptHandler) and n.name in mapping:
            n.name = mapping[n.name]
        elif isinstance(n, ast.Nonlocal):
            n.names = [mapping.get(x, x) for x in n.names]


def abstract(code: str, mapping: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """(abstract code, mapping concrete -> placeholder); see the module docstring.

    With `mapping` (that of the pair's source) the code is renamed with it, and names it
    binds that the mapping lacks get the next free placeholders; the returned mapping is
    the extended one (the argument is not modified). SyntaxError when the code does not
    parse; ValueError when a given mapping is not one-to-one or a placeholder it uses is
    an identifier of the code that the mapping does not rename."""
    tree = ast.parse(code)
    mapping = dict(mapping or {})
    if len(set(mapping.values())) != len(mapping):
        raise ValueError(f"mapping is not one-to-one: {mapping}")
    spelled = identifiers(tree)
    clash = (spelled - set(mapping)) & set(mapping.values())
    if clash:
        raise ValueError(f"placeholders {sorted(clash)} are identifiers of the code")
    if not _introspective(tree):
        kinds, keep = _bindings(tree)
        new = [n for n in _occurrences(tree, set(kinds) - keep) if n not in mapping]
        taken = spelled | set(mapping.values())
        counters = {"f": 0, "v": 0}
        for name in new:
            k = kinds[name]
            while f"{k}{counters[k]}" in taken:
                counters[k] += 1
            mapping[name] = f"{k}{counters[k]}"
            taken.add(mapping[name])
    _rename(tree, mapping)
    return ast.unparse(tree), mapping


def concretise(code: str, mapping: dict[str, str]) -> tuple[str, list[str]]:
    """(code with every placeholder of `mapping` mapped back to its concrete name, the
    placeholder-shaped names the code uses that the mapping lacks, e.g. a fresh variable
    the editor introduced; they are kept as written). SyntaxError when the code does not
    parse (an editor's broken output: scored as a syntax failure, never repaired)."""
    tree = ast.parse(code)
    inverse = {v: k for k, v in mapping.items()}
    invented = sorted(n for n in identifiers(tree) if PLACEHOLDER.match(n) and n not in inverse)
    _rename(tree, inverse)
    return ast.unparse(tree), invented
