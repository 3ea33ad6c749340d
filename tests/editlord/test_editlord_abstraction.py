"""EditLord identifier abstraction: exact round trips, preserved semantics, the scoping
cases that must not be renamed, and the scoring path (abstract reply -> concrete code)."""
import ast
import os

import pytest

from lib.editlord import evaluation
from lib.data import humaneval
from lib.editlord import abstraction as A
from lib.editlord import corpus, edit_script, library, pairs, perturb
from lib.editlord.pairs import Pair


@pytest.fixture(scope="module")
def units():
    """(problem, context, unit) of every HumanEval problem."""
    out = []
    for p in humaneval.load():
        ctx, unit = pairs.split_problem(p)
        out.append((p, ctx, unit))
    return out


def _round_trip(source, target):
    a, m = A.abstract(source)
    b, m2 = A.abstract(target, m)
    assert m2.items() >= m.items()                                 # the target extends the map
    assert A.concretise(a, m) == (source, [])
    assert A.concretise(b, m2) == (target, [])
    ast.parse(a)
    # the gold edit in abstract space, mapped back, is the concrete target
    if a != b:
        assert A.concretise(edit_script.apply(a, edit_script.gold(a, b)), m2)[0] == target
    return a, m


def test_round_trip_on_every_humaneval_unit_and_injected_pairs(units):
    renamed = 0
    for k, (_, _, unit) in enumerate(units):
        a, m = _round_trip(unit, unit)
        renamed += bool(m)
        if k % 4 == 0:                              # a quarter of the problems, every rule
            for r in library.LIBRARY:
                src, _ = pairs.inject(unit, [r.name])
                if src is not None:
                    _round_trip(src, unit)
    assert renamed == len(units)                    # every unit has a name of its own


def test_round_trip_on_a_corpus_sample():
    units, _ = corpus.functions(os.path.join(corpus.stdlib_dir(), "collections"), max_chars=450,
                                seed=0, base=corpus.stdlib_dir())
    ps, _ = corpus.build_pairs(units, max_rules=2, max_pairs_per_unit=1, max_chars=450,
                               max_pairs=15)
    assert len(ps) >= 10
    for _, code in units:
        _round_trip(code, code)
    for p in ps:
        _round_trip(p.source, p.target)


@pytest.mark.parametrize("task", ["HumanEval/6", "HumanEval/12", "HumanEval/26", "HumanEval/129"])
def test_abstract_code_passes_the_same_tests(units, task):
    """Semantics preserved: the abstract unit (its entry point re-exported under the
    original name) passes the HumanEval tests. All 248 pairs of the quick run, both sides,
    were checked the same way once (README)."""
    prob, ctx, unit = next(u for u in units if u[0].task_id == task)
    a, m = A.abstract(unit)
    assert prob.entry_point not in a
    g = pairs.grade_unit(prob, ctx, f"{a}\n{prob.entry_point} = {m[prob.entry_point]}")
    assert g.passed, g.detail
    assert not pairs.grade_unit(prob, ctx, a).passed   # the tests do call the abstract f0


SCOPES = '''
def outer(items, key):
    total = 0
    count = [0]

    def bump(step=1):
        nonlocal total
        total += step
        count[0] += 1
    for item in sorted(items, key=key):
        try:
            bump(step=item.size)
        except ValueError as err:
            log(err.args, key=lambda v: v)
    squares = [x * x for x in range(3)]
    return (total, item.total, squares, outer(items[1:], key=key))
'''


def test_nested_scopes_keywords_attributes_and_order():
    src = pairs.normal(SCOPES)
    a, m = A.abstract(src)
    # `key` and `step` are passed by keyword to the unit's own defs (outer(..., key=key),
    # bump(step=...)), so they keep their names; the rest in order of first occurrence
    assert m == {"outer": "f0", "items": "v0", "total": "v1", "count": "v2", "bump": "f1",
                 "item": "v3", "err": "v4", "v": "v5", "squares": "v6", "x": "v7"}
    assert "nonlocal v1" in a and "except ValueError as v4" in a
    assert "v3.total" in a and "v4.args" in a and "v3.size" in a  # attributes keep names
    assert "sorted(v0, key=key)" in a and "f0(v0[1:], key=key)" in a
    assert "def f1(step=1)" in a and "f1(step=v3.size)" in a
    assert "lambda v5: v5" in a
    assert "log(" in a and "ValueError" in a                      # globals and builtins kept
    assert A.concretise(a, m)[0] == src


def test_names_that_must_keep_their_spelling():
    src = pairs.normal('''
def f(xs):
    global seen
    import math as m
    seen = m.floor(len(xs))

    class Box:
        size = 3

        def get(self):
            return self.size
    return Box().get() + seen
''')
    a, mp = A.abstract(src)
    assert mp == {"f": "f0", "xs": "v0"}                           # global, import, class kept
    assert "seen = m.floor" in a and "def get(self)" in a and "size = 3" in a
    assert A.abstract("def f(a):\n    b = a\n    return locals()")[1] == {}   # introspection
    # a placeholder never equals an identifier of the code: v0 is taken by an attribute
    a2, m2 = A.abstract("def f(a):\n    return a.v0 + v1")
    assert m2 == {"f": "f0", "a": "v0"} or "v0" not in m2.values()
    assert set(m2.values()).isdisjoint({"v1"}) and A.concretise(a2, m2)[0] == \
        "def f(a):\n    return a.v0 + v1"


def test_mapping_errors_and_invented_names():
    with pytest.raises(ValueError, match="one-to-one"):
        A.abstract("def f(a):\n    return a", {"a": "v0", "b": "v0"})
    with pytest.raises(ValueError, match="identifiers of the code"):
        A.abstract("def f(a):\n    return v0", {"a": "v0"})
    src = "def f(xs):\n    t = 0\n    for x in xs:\n        t = t + x\n    return t"
    a, m = A.abstract(src)
    tgt, m2 = A.abstract("def f(xs):\n    t = 0\n    for y in xs:\n        t += y\n    return t", m)
    assert m2 == {**m, "y": "v3"}                                   # new target name: next
    assert "for v3 in v0:\n        v1 += v3" in tgt
    code, invented = A.concretise(a.replace("v1 = v1 + v2", "v9 = v1 + v2"), m)
    assert invented == ["v9"] and "v9 = t + x" in code              # kept as written, counted
    with pytest.raises(SyntaxError):
        A.concretise("def f0(v0:\n", m)


def test_rename_perturbation_is_invisible_after_abstraction(units):
    same = n = 0
    for k, (_, _, unit) in enumerate(units[:60]):
        r = perturb.rename(unit, seed=k)
        if r is None:
            continue
        n += 1
        same += A.abstract(r)[0] == A.abstract(unit)[0]
    assert n >= 30 and same == n
    d = perturb.dead_code(units[0][2], seed=0)                      # dead code stays visible
    assert A.abstract(d)[0] != A.abstract(units[0][2])[0]


def test_score_edit_concretises_the_abstract_reply():
    src = "def total(xs):\n    acc = 0\n    for x in xs:\n        acc = acc + x\n    return acc"
    tgt = src.replace("acc = acc + x", "acc += x")
    pair = Pair("p", "", "", src, tgt, ("aug_assign",))
    a, m = A.abstract(src)
    assert "v1 = v1 + v2" in a
    seen = []

    def grader(p, code):
        seen.append(code)
        return code == tgt, ""
    row = evaluation.score_edit(pair, "[EDIT SCRIPT]\n@@ 4,1\n+         v1 += v2\n[/EDIT SCRIPT]",
                           grader, a, "edit_script", m)
    assert row["success"] and row["exact"] and row["invented"] == 0 and seen == [tgt]
    row = evaluation.score_edit(pair, "[EDIT SCRIPT]\n@@ 4,1\n+         v7 += v2\n[/EDIT SCRIPT]",
                           grader, a, "edit_script", m)
    assert row["parsed"] and not row["correct"] and row["invented"] == 1
    row = evaluation.score_edit(pair, "[EDIT SCRIPT]\n@@ 4,1\n+         v1 +=\n[/EDIT SCRIPT]",
                           grader, a, "edit_script", m)
    assert row["failure"] == "syntax" and len(seen) == 2
