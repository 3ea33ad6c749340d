"""The injected rule library: code-transformation rules with known ground truth.

Each `LibraryRule` is one "switch from X to Y" edit over Python ASTs, in three functions:

    inject(tree)  -> (tree', sites)   inverse rewrite: good code (Y) -> anti-pattern (X)
    forward(tree) -> (tree', sites)   the rule itself: anti-pattern (X) -> good code (Y)
    present(code) -> bool             the checker: X occurs (forward finds >= 1 site)

Trees are `ast.Module`s; transforms work on deep copies, every site at once. Pairs are
built (lib/editlord/pairs.py) from HumanEval canonical solutions t by s = inject(t), kept
only when forward(s) == t exactly (in `ast.unparse` normal form), the checker fires on s
and not on t, and the HumanEval tests pass on both. The library spans the paper's three
task families on Python (the paper works on C/C++): performance (loops that `sum`/`join`/
comprehensions replace, copying a container for a membership test, sorting for a
minimum), security (`eval` used to parse integers), and readability/decompilation-like
code (goto-style `while` counters, index loops, `if c: return True`, ...).
"""
from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
from collections.abc import Callable

Transform = Callable[[ast.Module], tuple[ast.Module, int]]


@dataclasses.dataclass(frozen=True)
class LibraryRule:
    name: str
    category: str        # "performance" | "security" | "readability"
    text: str            # "switch from X to Y"
    inject: Transform
    forward: Transform

    def present(self, code: str | ast.Module) -> bool:
        """The checker: does the anti-pattern X occur? (SyntaxError for bad code.)"""
        tree = ast.parse(code) if isinstance(code, str) else code
        return self.forward(tree)[1] > 0


# ----------------------------------------------------------------------------- helpers


def names_in(tree: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.Lambda)) and hasattr(n, "name"):
            out.add(n.name)
    return out


def fresh(tree: ast.AST, candidates: tuple[str, ...]) -> str:
    used = names_in(tree) | set(dir(builtins))
    for c in candidates:
        if c not in used:
            return c
    i = 0
    while f"{candidates[0]}{i}" in used:
        i += 1
    return f"{candidates[0]}{i}"


def _is_name(node, name=None) -> bool:
    return isinstance(node, ast.Name) and (name is None or node.id == name)


def _is_const(node, value, typ=None) -> bool:
    return (isinstance(node, ast.Constant) and node.value == value
            and type(node.value) is (typ or type(value)))


def _call(node, func: str, nargs: int | None = None) -> bool:
    return (isinstance(node, ast.Call) and _is_name(node.func, func) and not node.keywords
            and (nargs is None or len(node.args) == nargs)
            and not any(isinstance(a, ast.Starred) for a in node.args))


def _mk_call(func: str, *args) -> ast.Call:
    return ast.Call(ast.Name(func, ast.Load()), list(args), [])


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _store(name: str) -> ast.Name:
    return ast.Name(name, ast.Store())


def _finish(tree: ast.Module, n: int) -> tuple[ast.Module, int]:
    return ast.fix_missing_locations(tree), n


def _stmt_lists(tree: ast.AST):
    """Every statement list of the tree (bodies, else branches, handlers), outer first."""
    for node in list(ast.walk(tree)):
        for field in ("body", "orelse", "finalbody"):
            lst = getattr(node, field, None)
            if isinstance(lst, list) and lst and isinstance(lst[0], ast.stmt):
                yield lst


def block_rule(fn: Callable[[list, int, ast.Module], tuple[int, list] | None]) -> Transform:
    """A transform rewriting statement windows: `fn(stmts, i, tree)` returns
    (number of statements consumed from i, replacement statements) or None."""
    def run(tree: ast.Module) -> tuple[ast.Module, int]:
        tree = copy.deepcopy(tree)
        n = 0
        for lst in _stmt_lists(tree):
            i = 0
            while i < len(lst):
                r = fn(lst, i, tree)
                if r is None:
                    i += 1
                    continue
                k, new = r
                lst[i:i + k] = new
                i += len(new)
                n += 1
        return _finish(tree, n)
    return run


def expr_rule(fn: Callable[[ast.AST, ast.Module], ast.AST | None]) -> Transform:
    """A transform rewriting expression nodes bottom-up: `fn(node, tree)` returns the
    replacement or None."""
    def run(tree: ast.Module) -> tuple[ast.Module, int]:
        tree = copy.deepcopy(tree)
        count = [0]

        class T(ast.NodeTransformer):
            def generic_visit(self, node):
                super().generic_visit(node)
                new = fn(node, tree)
                if new is None:
                    return node
                count[0] += 1
                return new
        tree = T().visit(tree)
        return _finish(tree, count[0])
    return run


def _single_comp(node) -> ast.comprehension | None:
    """The only generator of a list comprehension / generator expression with <= 1 `if`."""
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        g = node.generators[0]
        if not g.is_async and len(g.ifs) <= 1:
            return g
    return None


def _loop_over(g: ast.comprehension, inner: ast.stmt) -> ast.For:
    body = [ast.If(g.ifs[0], [inner], [])] if g.ifs else [inner]
    return ast.For(g.target, g.iter, body, [])


def _unloop(loop) -> tuple[ast.comprehension, ast.stmt] | None:
    """(comprehension, innermost statement) of `for t in it: [if c:] stmt`."""
    if not isinstance(loop, ast.For) or loop.orelse or len(loop.body) != 1:
        return None
    inner, ifs = loop.body[0], []
    if isinstance(inner, ast.If) and not inner.orelse and len(inner.body) == 1:
        ifs, inner = [inner.test], inner.body[0]
    return ast.comprehension(loop.target, loop.iter, ifs, 0), inner


def _has(tree_or_list, types) -> bool:
    nodes = tree_or_list if isinstance(tree_or_list, list) else [tree_or_list]
    return any(isinstance(n, types) for s in nodes for n in ast.walk(s))


# ----------------------------------------------------------------------------- performance


def _acc_inject(init, make_call_ok):
    def fn(lst, i, tree):
        s = lst[i]
        if not isinstance(s, ast.Return) or s.value is None or not make_call_ok(s.value):
            return None
        comp = s.value.args[0]
        g = _single_comp(comp)
        if g is None:
            return None
        acc = fresh(tree, ("total", "acc", "out"))
        loop = _loop_over(g, ast.AugAssign(_store(acc), ast.Add(), comp.elt))
        return 1, [ast.Assign([_store(acc)], init()), loop, ast.Return(_load(acc))]
    return fn


def _acc_forward(is_init, build):
    def fn(lst, i, tree):
        if i + 2 >= len(lst):
            return None
        a, loop, r = lst[i:i + 3]
        if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and _is_name(a.targets[0])
                and is_init(a.value)):
            return None
        acc = a.targets[0].id
        u = _unloop(loop)
        if u is None or not (isinstance(r, ast.Return) and _is_name(r.value, acc)):
            return None
        g, inner = u
        if not (isinstance(inner, ast.AugAssign) and _is_name(inner.target, acc)
                and isinstance(inner.op, ast.Add)):
            return None
        if acc in names_in(inner.value) or any(acc in names_in(x) for x in [g.iter, *g.ifs]):
            return None
        return 3, [ast.Return(build(ast.GeneratorExp(inner.value, [g])))]
    return fn


SUM_LOOP = LibraryRule(
    "sum_loop", "performance",
    "switch from accumulating a total in a for loop to the built-in sum over a generator",
    block_rule(_acc_inject(lambda: ast.Constant(0),
                           lambda v: _call(v, "sum", 1))),
    block_rule(_acc_forward(lambda v: _is_const(v, 0, int),
                            lambda gen: _mk_call("sum", gen))))


def _is_join(v) -> bool:
    return (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
            and v.func.attr == "join" and _is_const(v.func.value, "") and len(v.args) == 1
            and not v.keywords)


JOIN_CONCAT = LibraryRule(
    "join_concat", "performance",
    "switch from building a string with += in a loop to ''.join over a generator",
    block_rule(_acc_inject(lambda: ast.Constant(""), _is_join)),
    block_rule(_acc_forward(lambda v: _is_const(v, ""),
                            lambda gen: ast.Call(ast.Attribute(ast.Constant(""), "join",
                                                               ast.Load()), [gen], []))))


def _append_inject(lst, i, tree):
    s = lst[i]
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and _is_name(s.targets[0]):
        var, comp, tail = s.targets[0].id, s.value, []
        if var in names_in(comp):
            return None
    elif isinstance(s, ast.Return) and s.value is not None:
        comp = s.value
        var = fresh(tree, ("result", "res", "out"))
        tail = [ast.Return(_load(var))]
    else:
        return None
    if not isinstance(comp, ast.ListComp):
        return None
    g = _single_comp(comp)
    if g is None:
        return None
    app = ast.Expr(ast.Call(ast.Attribute(_load(var), "append", ast.Load()), [comp.elt], []))
    return 1, [ast.Assign([_store(var)], ast.List([], ast.Load())), _loop_over(g, app), *tail]


def _append_forward(lst, i, tree):
    if i + 1 >= len(lst):
        return None
    a, loop = lst[i:i + 2]
    if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and _is_name(a.targets[0])
            and isinstance(a.value, ast.List) and not a.value.elts):
        return None
    var = a.targets[0].id
    u = _unloop(loop)
    if u is None:
        return None
    g, inner = u
    if not (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call)
            and isinstance(inner.value.func, ast.Attribute) and inner.value.func.attr == "append"
            and _is_name(inner.value.func.value, var) and len(inner.value.args) == 1
            and not inner.value.keywords):
        return None
    elt = inner.value.args[0]
    if any(var in names_in(x) for x in [elt, g.iter, *g.ifs]):
        return None
    comp = ast.ListComp(elt, [g])
    if (i + 2 < len(lst) and isinstance(lst[i + 2], ast.Return)
            and _is_name(lst[i + 2].value, var)):
        return 3, [ast.Return(comp)]
    return 2, [ast.Assign([_store(var)], comp)]


APPEND_LOOP = LibraryRule(
    "append_loop", "performance",
    "switch from appending to an empty list in a for loop to a list comprehension",
    block_rule(_append_inject), block_rule(_append_forward))


def _membership_inject(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn)) and _is_name(node.comparators[0])):
        return ast.Compare(node.left, node.ops, [_mk_call("list", node.comparators[0])])
    return None


def _membership_forward(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and _call(node.comparators[0], "list", 1)):
        return ast.Compare(node.left, node.ops, [node.comparators[0].args[0]])
    return None


MEMBERSHIP_COPY = LibraryRule(
    "membership_copy", "performance",
    "switch from testing membership in list(container) to testing membership in the container",
    expr_rule(_membership_inject), expr_rule(_membership_forward))


def _minmax_inject(node, tree):
    for f, idx in (("min", ast.Constant(0)), ("max", ast.UnaryOp(ast.USub(), ast.Constant(1)))):
        if _call(node, f, 1):
            return ast.Subscript(_mk_call("sorted", node.args[0]), idx, ast.Load())
    return None


def _minmax_forward(node, tree):
    if isinstance(node, ast.Subscript) and _call(node.value, "sorted", 1):
        arg = node.value.args[0]
        if _is_const(node.slice, 0, int):
            return _mk_call("min", arg)
        s = node.slice
        if (isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub)
                and _is_const(s.operand, 1, int)):
            return _mk_call("max", arg)
    return None


SORTED_MINMAX = LibraryRule(
    "sorted_minmax", "performance",
    "switch from sorted(xs)[0] or sorted(xs)[-1] to min(xs) or max(xs)",
    expr_rule(_minmax_inject), expr_rule(_minmax_forward))


# ----------------------------------------------------------------------------- security

EVAL_INT = LibraryRule(
    "eval_int", "security",
    "switch from eval(text) to int(text) when parsing a number",
    expr_rule(lambda n, t: _mk_call("eval", n.args[0]) if _call(n, "int", 1) else None),
    expr_rule(lambda n, t: _mk_call("int", n.args[0]) if _call(n, "eval", 1) else None))


def _isinstance_inject(node, tree):
    if _call(node, "isinstance", 2) and _is_name(node.args[1]):
        return ast.Compare(_mk_call("type", node.args[0]), [ast.Eq()], [node.args[1]])
    return None


def _isinstance_forward(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
            and _call(node.left, "type", 1) and _is_name(node.comparators[0])):
        return _mk_call("isinstance", node.left.args[0], node.comparators[0])
    return None


TYPE_CHECK = LibraryRule(
    "type_check", "security",
    "switch from comparing type(x) == T to isinstance(x, T)",
    expr_rule(_isinstance_inject), expr_rule(_isinstance_forward))


# ----------------------------------------------------------------------------- readability


def _boolret_inject(lst, i, tree):
    s = lst[i]
    if not (isinstance(s, ast.Return) and s.value is not None):
        return None
    v = s.value
    ok = isinstance(v, ast.Compare) or (isinstance(v, ast.BoolOp)
                                        and all(isinstance(x, ast.Compare) for x in v.values))
    if not ok:
        return None
    return 1, [ast.If(v, [ast.Return(ast.Constant(True))], []), ast.Return(ast.Constant(False))]


def _boolret_forward(lst, i, tree):
    if i + 1 >= len(lst):
        return None
    a, b = lst[i:i + 2]
    if (isinstance(a, ast.If) and not a.orelse and len(a.body) == 1
            and isinstance(a.body[0], ast.Return) and _is_const(a.body[0].value, True)
            and isinstance(b, ast.Return) and _is_const(b.value, False)):
        return 2, [ast.Return(a.test)]
    return None


BOOL_RETURN = LibraryRule(
    "bool_return", "readability",
    "switch from if cond: return True / return False to return cond",
    block_rule(_boolret_inject), block_rule(_boolret_forward))

RANGE_ZERO = LibraryRule(
    "range_zero", "readability",
    "switch from range(0, n) to range(n)",
    expr_rule(lambda n, t: _mk_call("range", ast.Constant(0), n.args[0])
              if _call(n, "range", 1) else None),
    expr_rule(lambda n, t: _mk_call("range", n.args[1])
              if _call(n, "range", 2) and _is_const(n.args[0], 0, int) else None))


def _while_inject(lst, i, tree):
    s = lst[i]
    if not (isinstance(s, ast.For) and not s.orelse and _is_name(s.target)
            and isinstance(s.iter, ast.Call) and _call(s.iter, "range")
            and len(s.iter.args) in (1, 2)):
        return None
    var = s.target.id
    if _has(s.body, (ast.Continue,)):
        return None
    for n in (x for b in s.body for x in ast.walk(b)):
        if isinstance(n, ast.Name) and n.id == var and isinstance(n.ctx, ast.Store):
            return None
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            return None
    start, end = (ast.Constant(0), s.iter.args[0]) if len(s.iter.args) == 1 else s.iter.args
    inc = ast.AugAssign(_store(var), ast.Add(), ast.Constant(1))
    loop = ast.While(ast.Compare(_load(var), [ast.Lt()], [end]), [*s.body, inc], [])
    return 1, [ast.Assign([_store(var)], start), loop]


def _while_forward(lst, i, tree):
    if i + 1 >= len(lst):
        return None
    a, w = lst[i:i + 2]
    if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and _is_name(a.targets[0])
            and isinstance(w, ast.While) and not w.orelse and len(w.body) >= 2):
        return None
    var = a.targets[0].id
    t = w.test
    if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Lt)
            and _is_name(t.left, var)):
        return None
    inc = w.body[-1]
    if not (isinstance(inc, ast.AugAssign) and _is_name(inc.target, var)
            and isinstance(inc.op, ast.Add) and _is_const(inc.value, 1, int)):
        return None
    body = w.body[:-1]
    if _has(body, (ast.Continue,)):
        return None
    args = [t.comparators[0]] if _is_const(a.value, 0, int) else [a.value, t.comparators[0]]
    return 2, [ast.For(_store(var), _mk_call("range", *args), body, [])]


WHILE_LOOP = LibraryRule(
    "while_loop", "readability",
    "switch from a while loop with a manual counter to a for loop over range",
    block_rule(_while_inject), block_rule(_while_forward))


def _index_inject(lst, i, tree):
    s = lst[i]
    if not (isinstance(s, ast.For) and not s.orelse and _is_name(s.target) and _is_name(s.iter)):
        return None
    idx = fresh(tree, ("i", "idx", "k"))
    seq = s.iter.id
    get = ast.Assign([_store(s.target.id)], ast.Subscript(_load(seq), _load(idx), ast.Load()))
    return 1, [ast.For(_store(idx), _mk_call("range", _mk_call("len", _load(seq))),
                       [get, *s.body], [])]


def _index_forward(lst, i, tree):
    s = lst[i]
    if not (isinstance(s, ast.For) and not s.orelse and _is_name(s.target)
            and _call(s.iter, "range", 1) and _call(s.iter.args[0], "len", 1)
            and _is_name(s.iter.args[0].args[0]) and s.body):
        return None
    idx, seq = s.target.id, s.iter.args[0].args[0].id
    g = s.body[0]
    if not (isinstance(g, ast.Assign) and len(g.targets) == 1 and _is_name(g.targets[0])
            and isinstance(g.value, ast.Subscript) and _is_name(g.value.value, seq)
            and _is_name(g.value.slice, idx)):
        return None
    rest = s.body[1:]
    if not rest or any(idx in names_in(b) for b in rest):
        return None
    return 1, [ast.For(_store(g.targets[0].id), _load(seq), rest, [])]


INDEX_LOOP = LibraryRule(
    "index_loop", "readability",
    "switch from looping over range(len(xs)) and indexing to looping over xs directly",
    block_rule(_index_inject), block_rule(_index_forward))


def _none_inject(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Is, ast.IsNot))
            and _is_const(node.comparators[0], None)):
        op = ast.Eq() if isinstance(node.ops[0], ast.Is) else ast.NotEq()
        return ast.Compare(node.left, [op], node.comparators)
    return None


def _none_forward(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and _is_const(node.comparators[0], None)):
        op = ast.Is() if isinstance(node.ops[0], ast.Eq) else ast.IsNot()
        return ast.Compare(node.left, [op], node.comparators)
    return None


NONE_COMPARE = LibraryRule(
    "none_compare", "readability",
    "switch from == None to is None",
    expr_rule(_none_inject), expr_rule(_none_forward))


def _aug_inject(lst, i, tree):
    s = lst[i]
    if isinstance(s, ast.AugAssign) and _is_name(s.target):
        v = s.target.id
        return 1, [ast.Assign([_store(v)], ast.BinOp(_load(v), s.op, s.value))]
    return None


def _aug_forward(lst, i, tree):
    s = lst[i]
    if (isinstance(s, ast.Assign) and len(s.targets) == 1 and _is_name(s.targets[0])
            and isinstance(s.value, ast.BinOp) and _is_name(s.value.left, s.targets[0].id)):
        return 1, [ast.AugAssign(_store(s.targets[0].id), s.value.op, s.value.right)]
    return None


AUG_ASSIGN = LibraryRule(
    "aug_assign", "readability",
    "switch from x = x + y to x += y",
    block_rule(_aug_inject), block_rule(_aug_forward))


def _lenzero_inject(node, tree):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _is_name(node.operand):
        return ast.Compare(_mk_call("len", node.operand), [ast.Eq()], [ast.Constant(0)])
    return None


def _lenzero_forward(node, tree):
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
            and _call(node.left, "len", 1) and _is_const(node.comparators[0], 0, int)):
        return ast.UnaryOp(ast.Not(), node.left.args[0])
    return None


LEN_ZERO = LibraryRule(
    "len_zero", "readability",
    "switch from len(xs) == 0 to not xs",
    expr_rule(_lenzero_inject), expr_rule(_lenzero_forward))


LIBRARY: tuple[LibraryRule, ...] = (
    SUM_LOOP, JOIN_CONCAT, APPEND_LOOP, MEMBERSHIP_COPY, SORTED_MINMAX,
    EVAL_INT, TYPE_CHECK,
    BOOL_RETURN, RANGE_ZERO, WHILE_LOOP, INDEX_LOOP, NONE_COMPARE, AUG_ASSIGN, LEN_ZERO)
BY_NAME = {r.name: r for r in LIBRARY}
CATEGORIES = ("performance", "security", "readability")


def get(names) -> list[LibraryRule]:
    """Library rules by name; ValueError naming unknown ones."""
    bad = [n for n in names if n not in BY_NAME]
    if bad:
        raise ValueError(f"unknown library rules {bad}; known: {sorted(BY_NAME)}")
    return [BY_NAME[n] for n in names]


def detected(code: str | ast.Module, rules=LIBRARY) -> list[str]:
    """Names of the rules whose anti-pattern occurs in `code`."""
    tree = ast.parse(code) if isinstance(code, str) else code
    return [r.name for r in rules if r.present(tree)]
