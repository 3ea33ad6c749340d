"""The edit-script target format: gold scripts reproduce targets exactly, malformed
scripts are counted failures (never repaired), and the editor's format plumbing."""
import ast

import pytest

from lib.editlord import evaluation
from lib.data import humaneval
from lib.editlord import edit_script, editor, library, pairs
from lib.editlord.pairs import Pair
from tests.editlord.test_editlord_library import SNIPPETS


def _snippet_pairs():
    out = []
    for name, snip in sorted(SNIPPETS.items()):
        target = pairs.normal(snip)
        bad, _ = library.BY_NAME[name].inject(ast.parse(target))
        out.append((ast.unparse(bad), target))
    return out


@pytest.fixture(scope="module")
def tiny_set():
    """One pair per library rule (snippets) + HumanEval pairs with up to 2 injected rules."""
    hp, _ = pairs.build_pairs(humaneval.load(limit=8), max_rules=2, max_pairs_per_problem=3,
                              max_chars=600, run_tests=False)
    assert len(hp) >= 5
    return _snippet_pairs() + [(p.source, p.target) for p in hp]


def test_gold_script_reproduces_every_target(tiny_set):
    for source, target in tiny_set:
        script = edit_script.gold(source, target)
        assert script.startswith("@@ ")
        assert edit_script.apply(source, script) == target
        assert len(script) < len(target) + 40          # a script is not a copy of the target


def test_apply_semantics_by_hand():
    src = "a\nb\nc\nd"
    assert edit_script.apply(src, "@@ 2,1\n+ B") == "a\nB\nc\nd"
    assert edit_script.apply(src, "@@ 2,2") == "a\nd"                      # deletion
    assert edit_script.apply(src, "@@ 1,0\n+ z") == "z\na\nb\nc\nd"        # insertion
    assert edit_script.apply(src, "@@ 5,0\n+ e") == "a\nb\nc\nd\ne"        # append
    assert edit_script.apply(src, "@@ 1,1\n+     x\n@@ 4,1\n+ y\n+") == "    x\nb\nc\ny\n"
    assert edit_script.numbered("p\n  q") == "1| p\n2|   q"


@pytest.mark.parametrize("script, reason", [
    ("", "empty"),
    ("@@ 2\n+ B", "bad_line"),                     # header without COUNT
    ("@@ 2,1\nB", "bad_line"),                     # body line without '+ '
    ("@@ 2,1\n- b\n+ B", "bad_line"),              # '-' lines are not part of the grammar
    ("+ B\n@@ 2,1", "body_before_header"),
    ("@@ 0,1\n+ B", "out_of_range"),
    ("@@ 4,2\n+ B", "out_of_range"),               # past the last line
    ("@@ 6,0\n+ B", "out_of_range"),
    ("@@ 3,1\n+ C\n@@ 2,1\n+ B", "overlap"),       # hunks out of order
    ("@@ 2,2\n+ B\n@@ 3,1\n+ C", "overlap"),
    ("@@ 2,0", "no_op"),
])
def test_malformed_scripts_raise_with_reason(script, reason):
    with pytest.raises(edit_script.EditScriptError, match=reason) as e:
        edit_script.apply("a\nb\nc\nd", script)
    assert e.value.reason == reason


SRC = "def f(xs):\n    t = 0\n    for x in xs:\n        t = t + x\n    return t"
TGT = "def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t"
PAIR = Pair("p", "", "", SRC, TGT, ("aug_assign",))


def test_conversation_in_edit_script_format():
    conv = editor.conversation("spec_rules", PAIR, {"input": "xs"}, [], "edit_script")
    assert conv[0]["content"] == "[ORIGINAL CODE]\n" + edit_script.numbered(SRC) + "\n[/ORIGINAL CODE]"
    a = conv[1]["content"]
    assert a.index("[SPEC]") < a.index(editor.RULES_HEADER) < a.index("[EDIT SCRIPT]")
    assert a.endswith("[EDIT SCRIPT]\n@@ 4,1\n+         t += x\n[/EDIT SCRIPT]")
    assert editor.candidate(a, SRC, "edit_script") == (TGT, "")
    assert editor.parse_rules(a) == []                         # "- none" is no rule
    with pytest.raises(ValueError, match="nothing to edit"):
        editor.code_part("edit_script", SRC, SRC)
    with pytest.raises(ValueError, match="target format"):
        editor.user_text(SRC, "diff")


def test_failures_are_counted_not_repaired():
    grades = []

    def grader(pair, code):
        grades.append(code)
        return code == TGT, ""
    ok = evaluation.score_edit(PAIR, "[EDIT SCRIPT]\n@@ 4,1\n+         t += x\n[/EDIT SCRIPT]",
                          grader, fmt="edit_script")
    assert ok["correct"] and ok["success"] and ok["exact"] and ok["failure"] == ""
    cases = {"[EDIT SCRIPT]\n@@ 4,1\n+         t += x\n": "no_script",           # cut off
             "[EDIT SCRIPT]\n@@ 9,1\n+ t += x\n[/EDIT SCRIPT]": "out_of_range",
             "[EDIT SCRIPT]\n@@ 4,1\n        t += x\n[/EDIT SCRIPT]": "bad_line",
             "[EDIT SCRIPT]\n@@ 4,1\n+ t += x\n[/EDIT SCRIPT]": "syntax"}   # bad indentation
    for reply, reason in cases.items():
        row = evaluation.score_edit(PAIR, reply, grader, fmt="edit_script")
        assert row["failure"] == reason and not row["parsed"] and row["fixed"] == 0.0
    assert grades == [TGT]                                       # failures never reach the tests
    # the script is applied to the input it answers (here a perturbed, renamed source)
    renamed = "def f(xs):\n    acc = 0\n    for x in xs:\n        acc = acc + x\n    return acc"
    row = evaluation.score_edit(PAIR, "[EDIT SCRIPT]\n@@ 4,1\n+         acc += x\n[/EDIT SCRIPT]",
                           grader, source=renamed, fmt="edit_script")
    assert row["parsed"] and grades[-1] == renamed.replace("acc = acc + x", "acc += x")
    s = evaluation.summarise([ok, row])
    assert s["n"] == 2 and s["parsed"] == 1.0


def test_renamed_copies_keep_the_edit(tiny_set):
    from lib.editlord import augment, perturb
    n = 0
    for k, (source, target) in enumerate(tiny_set):
        p = Pair(f"p{k}", "", "", source, target, tuple(library.detected(source)))
        q = augment.renamed(p, seed=k)
        if q is None:
            continue
        n += 1
        assert q.source != source and q.target != target and q.id == f"p{k}#r{k}"
        assert tuple(library.detected(q.source)) == p.rules              # same rules to apply
        assert library.detected(q.target) == library.detected(target)
        assert edit_script.apply(q.source, edit_script.gold(q.source, q.target)) == q.target
        assert pairs.normal(q.target) == q.target
        # no evaluation-perturbation name ("val_37") is ever used
        assert not any(f"{b}_" in q.source for b in perturb._FRESH)
    assert n >= len(tiny_set) - 2
    # behaviour is kept: same outputs on the same positional inputs
    src = "def f(xs, k):\n    t = 0\n    for i in range(len(xs)):\n        t = t + xs[i] * k\n    return t"
    q = augment.renamed(Pair("s", "", "", src, src, ()), seed=3)
    env_a, env_b = {}, {}
    exec(src, env_a)  # noqa: S102  (own snippet)
    exec(q.source, env_b)  # noqa: S102
    assert env_a["f"]([1, 2, 3], 2) == env_b["f"]([1, 2, 3], 2) == 12
    assert "xs" not in q.source and "def f(" in q.source


def test_robustness_target_needs_a_clean_advantage():
    from lib.editlord import report

    def ed(clean, drop):
        c = {"n": 60, "success": clean, "fixed": clean, "correct": clean}
        return {"eval": {"conditions": {"clean": c}, "mean_drop": {"success": drop, "fixed": drop}}}
    floor = {"editors": {"base": ed(0.12, 0.08), "spec_rules": ed(0.02, 0.01)}}
    t = report.targets(floor)
    assert not t["robustness"]["met"] and not t["rules_beat_base"]["met"]   # small drop from the floor
    ahead = {"editors": {"base": ed(0.12, 0.08), "spec_rules": ed(0.30, 0.05)}}
    t = report.targets(ahead)
    assert t["robustness"]["met"] and t["rules_beat_base"]["met"]
