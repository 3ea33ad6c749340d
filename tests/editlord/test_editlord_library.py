"""The injected rule library and the HumanEval pairs built with it."""
import ast

import pytest

from lib.data import humaneval
from lib.editlord import library, pairs

# one clean snippet per library rule (the Y side); injecting gives the X side
SNIPPETS = {
    "sum_loop": "def f(xs):\n    return sum(x * x for x in xs if x > 0)",
    "join_concat": "def f(xs):\n    return ''.join(c.upper() for c in xs)",
    "append_loop": "def f(xs):\n    return [x + 1 for x in xs if x]",
    "membership_copy": "def f(x, xs):\n    return x in xs",
    "sorted_minmax": "def f(xs):\n    return min(xs) + max(xs)",
    "eval_int": "def f(s):\n    return int(s) + 1",
    "type_check": "def f(x):\n    return isinstance(x, int)",
    "bool_return": "def f(a, b):\n    return a < b",
    "range_zero": "def f(n):\n    return list(range(n))",
    "while_loop": "def f(n):\n    out = []\n    for i in range(n):\n        out.append(i)\n    return out",
    "index_loop": "def f(xs):\n    t = []\n    for x in xs:\n        t.append(x)\n    return t",
    "none_compare": "def f(x):\n    return x is None",
    "aug_assign": "def f(n):\n    t = 1\n    t *= n\n    return t",
    "len_zero": "def f(xs):\n    return not xs",
}


def test_every_rule_has_a_snippet():
    assert set(SNIPPETS) == set(library.BY_NAME)
    assert {r.category for r in library.LIBRARY} == set(library.CATEGORIES)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_forward_recovers_target_and_checker_flips(name):
    rule = library.BY_NAME[name]
    target = pairs.normal(SNIPPETS[name])
    bad, n = rule.inject(ast.parse(target))
    source = ast.unparse(bad)
    assert n >= 1 and source != target
    assert rule.present(source) and not rule.present(target)
    assert ast.unparse(rule.forward(ast.parse(source))[0]) == target
    # the injected program computes the same thing on a sample input
    env_s, env_t = {}, {}
    exec(source, env_s)
    exec(target, env_t)
    args = {"sum_loop": ([1, -2, 3],), "join_concat": ("ab",), "append_loop": ([0, 1, 2],),
            "membership_copy": (2, [1, 2]), "sorted_minmax": ([3, 1, 2],), "eval_int": ("41",),
            "type_check": (3,), "bool_return": (1, 2), "range_zero": (3,), "while_loop": (3,),
            "index_loop": ([1, 2],), "none_compare": (None,), "aug_assign": (5,),
            "len_zero": ([],)}[name]
    assert env_s["f"](*args) == env_t["f"](*args)


def test_injection_without_site_is_not_applicable():
    assert pairs.inject("def f(x):\n    return x", ["eval_int"]) == (None, "not_applicable")
    with pytest.raises(ValueError, match="unknown library rules"):
        library.get(["no_such_rule"])


@pytest.fixture(scope="module")
def built():
    return pairs.build_pairs(humaneval.load(limit=30), max_rules=2, max_pairs_per_problem=4,
                             max_chars=600, run_tests=False)


def test_pairs_round_trip_and_exact_ground_truth(built):
    ps, dropped = built
    assert len(ps) >= 30
    for p in ps:
        assert pairs.recover(p.source, p.rules) == p.target
        assert set(library.detected(p.source)) == set(p.rules)
        assert library.detected(p.target) == []
        assert pairs.check_pair(p.target, p.source, p.rules) == ""


def test_pair_tests_pass_on_both_sides(built):
    ps, _ = built
    for p in ps[:3]:
        prob = humaneval.get(p.task_id)
        assert pairs.grade_unit(prob, p.context, p.target).passed
        assert pairs.grade_unit(prob, p.context, p.source).passed
    # and a broken edit fails them
    p = ps[0]
    broken = p.target.replace("return", "return None and", 1)
    assert not pairs.grade_unit(humaneval.get(p.task_id), p.context, broken).passed


def test_user_pairs_loader_counts_and_logs_bad_records(tmp_path, caplog):
    f = tmp_path / "pairs.jsonl"
    f.write_text('{"id": "a", "source": "x = 1 + 1", "target": "x = 2"}\n'
                 '{"id": "b", "source": "def f(:", "target": "x = 2"}\n'
                 'not json\n'
                 '{"id": "c", "source": "x = 1"}\n')
    ps, skipped = pairs.load_user_pairs(str(f))
    assert [p.id for p in ps] == ["a"] and ps[0].target == "x = 2"
    assert skipped == {"syntax_error": 1, "bad_record": 2}
    assert "pairs.jsonl:2" in caplog.text
    with pytest.raises(ValueError, match="pairs.jsonl:2: syntax_error"):
        pairs.load_user_pairs(str(f), strict=True)
