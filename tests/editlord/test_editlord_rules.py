"""Pattern extraction, Algorithm 1, manifestation, the rule book file, rule recovery."""
import json

import pytest

from lib.data import humaneval
from lib.editlord import learner, pairs, patterns, rulebook
from lib.editlord.pairs import Pair


def test_extract_minimal_region_and_abstraction():
    src = "def f(s, xs):\n    y = eval(s)\n    return y in list(xs)"
    tgt = "def f(s, xs):\n    y = int(s)\n    return y in xs"
    assert patterns.extract(src, tgt) == [("eval(_)", "int(_)"), ("_ in list(_)", "_ in _")]
    for x in ("eval(_)", "_ in list(_)", "_ = 0\nwhile _ < _:\n    ..."):
        assert patterns.key(x) == patterns.key(patterns.key(x))     # idempotent
    assert "eval(_)" in patterns.occurrences(src) and "eval(_)" not in patterns.occurrences(tgt)
    # a pure rename is not a rule
    assert patterns.extract("def f(a):\n    return a", "def f(b):\n    return b") == []


@pytest.fixture(scope="module")
def setup():
    ps, _ = pairs.build_pairs(humaneval.load(limit=45), max_rules=2, max_pairs_per_problem=5,
                              max_chars=600, run_tests=False)
    be = learner.OfflineBackend(ps, min_support=2)
    raw, skipped = learner.extract_all(ps, be)
    rules, info = learner.refine(raw, be, max_iters=10)
    return ps, be, raw, rules, info


def test_refine_terminates_and_is_idempotent(setup):
    ps, be, raw, rules, info = setup
    assert info.converged and info.iterations <= 10 and rules
    again, info2 = learner.refine(raw, be, start=rules)
    assert info2.converged and info2.iterations == 1
    assert [(r.text, r.alternatives) for r in again] == [(r.text, r.alternatives) for r in rules]
    # every kept rule is balanced; ids are R1..Rn in support order
    assert all(be.balanced(r) for r in rules)
    assert [r.id for r in rules] == [f"R{i + 1}" for i in range(len(rules))]
    assert [r.support for r in rules] == sorted((r.support for r in rules), reverse=True)
    # a one-round budget still returns
    _, info1 = learner.refine(raw, be, max_iters=1)
    assert info1.iterations == 1


def test_refine_prunes_unbalanced_and_merges_similar():
    ps = [Pair(f"p{i}", "", "", f"def f(s):\n    return eval(s) + {i}",
               f"def f(s):\n    return int(s) + {i}", ("eval_int",)) for i in range(4)]
    be = learner.OfflineBackend(ps, min_support=2, max_fraction=1.0)
    a = rulebook.pattern_rule("eval(_)", "int(_)")
    b = rulebook.pattern_rule("eval(_) + _", "int(_) + _")
    lonely = rulebook.pattern_rule("print(_)", "input(_)")            # support 0
    generic = rulebook.pattern_rule("_", "int(_)")                   # bare `_`
    rules, info = learner.refine([a, b, lonely, generic], be)
    assert len(rules) == 1 and set(rules[0].alternatives) == {a.alternatives[0], b.alternatives[0]}
    assert info.pruned >= 2 and info.merged >= 1 and rules[0].support == 4


class _AllRules(learner.OfflineBackend):
    """A backend (like a careless LM) that claims every rule applies."""

    def manifest(self, source, target, rules):
        return list(rules)


def test_manifestation_never_attaches_absent_x(setup):
    ps, be, raw, rules, info = setup
    bad = _AllRules(ps, min_support=2)
    for p in ps[:30]:
        occ = patterns.occurrences(p.source)
        for backend in (be, bad):
            ms = learner.manifest_sample(backend, p, rules)
            assert len(ms) <= learner.MAX_RULES_PER_SAMPLE
            for r in ms:
                assert any(patterns.key(x) in occ for x, _ in r.alternatives), (p.id, r.text)


def test_recovery_metrics(setup):
    ps, be, raw, rules, info = setup
    rec = learner.recovery(rules, be)
    assert 0.8 <= rec["precision"] <= 1 and 0.6 <= rec["recall"] <= 1
    # a rule book of one wrong rule: precision 0, recall 0
    wrong = [rulebook.pattern_rule("range(0, _)", "range(_)").with_(id="W")]
    be2 = learner.OfflineBackend([p for p in ps if "range_zero" not in p.rules], min_support=1)
    rec2 = learner.recovery(wrong, be2, min_support=1)
    assert rec2["precision"] == 0 and rec2["recall"] == 0


def test_rulebook_round_trip_and_errors(tmp_path, setup):
    rules = setup[3]
    path = str(tmp_path / "book.jsonl")
    rulebook.save(path, rules)
    assert rulebook.load(path) == rules
    with pytest.raises(rulebook.RuleBookError, match="empty"):
        rulebook.save(path, [])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(rulebook.RuleBookError, match="is empty"):
        rulebook.load(str(empty))
    with pytest.raises(rulebook.RuleBookError, match="does not exist"):
        rulebook.load(str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "switch from a to b", "alternatives": [["eval(", "int(_)"]]}))
    with pytest.raises(rulebook.RuleBookError, match=r"bad.jsonl:1: pattern 'eval\(' does not parse"):
        rulebook.load(str(bad))
    assert rulebook.load(str(bad), kind="text")[0].alternatives == (("eval(", "int(_)"),)
    bad.write_text('{"text": "x"}\n')
    with pytest.raises(rulebook.RuleBookError, match="no 'alternatives'"):
        rulebook.load(str(bad))
    assert rulebook.parse_switch("switch from `eval(x)` to `int(x)`.") == ("eval(x)", "int(x)")
    assert rulebook.parse_switch("make it faster") is None


def test_extract_all_counts_unparsable_pairs():
    be = learner.OfflineBackend([], min_support=1)
    ok = Pair("ok", "", "", "x = eval(s)", "x = int(s)", ())
    broken = Pair("bad", "", "", "def f(:", "x = 1", ())
    rules, skipped = learner.extract_all([ok, broken], be)
    assert [r.alternatives for r in rules] == [(("eval(_)", "int(_)"),)]
    assert skipped == {"SyntaxError": 1}
