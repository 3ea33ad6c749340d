"""The served-LM backend (scripted model), editor formats, prompting and iterative modes,
and the perturbations."""
import pytest

from lib.data import humaneval
from lib.editlord import editor, learner, library, lm_backend, pairs, perturb, rulebook
from lib.editlord.pairs import Pair
from lib.lm.client import ChatResult, Choice, LanguageModel


class ScriptedLM(LanguageModel):
    """Answers each request with reply(user_text) and records the requests."""

    name = "scripted"

    def __init__(self, reply):
        self.reply, self.requests = reply, []

    def chat(self, messages, **kw):
        text = messages[-1]["content"]
        self.requests.append(text)
        out = self.reply(text)
        return ChatResult([Choice(0, out, [], "stop", None)], self.name)

    def complete(self, prompt, **kw):
        raise NotImplementedError


SRC = "def f(s, xs):\n    y = eval(s)\n    return y in list(xs)"
TGT = "def f(s, xs):\n    y = int(s)\n    return y in xs"
PAIR = Pair("p", "", "", SRC, TGT, ("eval_int", "membership_copy"))


def test_served_backend_parses_the_paper_formats():
    def reply(text):
        if "[APPLIED_STRATEGIES]" in text:
            return ("[REASONING]eval is unsafe[/REASONING]\n[APPLIED_STRATEGIES]\n"
                    "1. switch from `eval(s)` to `int(s)`\n- switch from list(xs) to xs\n"
                    "[/APPLIED_STRATEGIES]")
        if "JSON" in text:
            return 'Here: {"problem_description": "parse", "input": "s", "output": "bool"}'
        if "well-balanced" in text:
            return "The rule is well-balanced." if "eval" in text else "The rule is specific."
        if "same code transformation" in text:
            return "NO"
        if "[ROOT CAUSES]" in text:
            return "[ROOT CAUSES] 1 [/ROOT CAUSES]"
        if "[RULES]" in text:
            return "[RULES]\n" + "\n".join(
                line[2:] for line in text.split("\n") if line.startswith("- ")) + "\n[/RULES]"
        raise AssertionError(text)
    lm = ScriptedLM(reply)
    be = lm_backend.ServedBackend(lm)
    raw = be.extract(PAIR)
    assert [r.alternatives for r in raw] == [(("eval(s)", "int(s)"),), (("list(xs)", "xs"),)]
    assert SRC in lm.requests[0] and TGT in lm.requests[0]
    assert be.spec(TGT) == {"problem_description": "parse", "input": "s", "output": "bool"}
    rules, info = learner.refine(raw, be, max_iters=5)
    assert info.converged and [r.text for r in rules] == ["switch from `eval(s)` to `int(s)`"]
    assert be.manifest(SRC, TGT, rules) == rules
    be.extract(PAIR)           # the next extraction sees the current hierarchy
    assert "Current rule hierarchy:\n- switch from `eval(s)` to `int(s)`" in lm.requests[-1]


def test_served_backend_format_errors_are_clear_or_counted(caplog):
    be = lm_backend.ServedBackend(ScriptedLM(lambda t: "I think it is fine."))
    with pytest.raises(lm_backend.LMFormatError, match=r"extract: reply lacks \[APPLIED_STRATEGIES\]"):
        be.extract(PAIR)
    rules, skipped = learner.extract_all([PAIR, PAIR], be)
    assert rules == [] and skipped == {"LMFormatError": 2}
    assert "rule extraction skipped pair p" in caplog.text
    with pytest.raises(lm_backend.LMFormatError, match="spec: reply is not a JSON object"):
        be.spec(TGT)
    r = rulebook.pattern_rule("eval(_)", "int(_)")
    assert be.balanced(r) is False and be.similar(r, r) is False
    assert be.merge(r, r) == r
    assert dict(be.format_errors) == {"balanced": 1, "similar": 1, "merge": 1}
    bad_nums = lm_backend.ServedBackend(ScriptedLM(lambda t: "[ROOT CAUSES] 3 [/ROOT CAUSES]"))
    with pytest.raises(lm_backend.LMFormatError, match=r"rule numbers \[3\] are not in 1..1"):
        bad_nums.manifest(SRC, TGT, [r])


def test_editor_format_order_and_parsing():
    rules = [rulebook.pattern_rule("eval(_)", "int(_)")]
    spec = {"problem_description": "p", "input": "s", "output": "int"}
    text = editor.assistant_text("spec_rules", TGT, spec, rules)
    assert text.index("[SPEC]") < text.index(editor.RULES_HEADER) < text.index("[EDITED CODE]")
    assert editor.parse_edit(text) == TGT
    assert editor.parse_rules(text) == [rules[0].text]
    assert editor.assistant_text("base", TGT, None, rules) == f"[EDITED CODE]\n{TGT}\n[/EDITED CODE]"
    assert "[SPEC]" not in editor.assistant_text("rules", TGT, None, rules)
    assert editor.parse_edit("no code here") is None
    assert editor.parse_edit("[EDITED CODE]\nx = 1\n") == "x = 1"       # cut generation
    with pytest.raises(ValueError, match="unknown editor variant"):
        editor.assistant_text("bogus", TGT, None, rules)
    with pytest.raises(ValueError, match="needs a spec"):
        editor.assistant_text("spec", TGT, None, rules)


def test_iterative_mode_reprompts_with_unmet_rules():
    be = learner.OfflineBackend([], min_support=1)
    rules = [rulebook.pattern_rule("eval(_)", "int(_)"), rulebook.pattern_rule("_ in list(_)", "_ in _")]
    half = "def f(s, xs):\n    y = int(s)\n    return y in list(xs)"
    replies = iter([f"[EDITED CODE]\n{half}\n[/EDITED CODE]", f"[EDITED CODE]\n{TGT}\n[/EDITED CODE]"])
    lm = ScriptedLM(lambda t: next(replies))

    def run_tests(code):
        env = {}
        exec(code, env)
        ok = env["f"]("3", [3]) is True and env["f"]("4", [3]) is False
        return ok, "" if ok else "AssertionError"
    res = editor.iterative_edit(lm, SRC, rules, run_tests=run_tests, backend=be, max_rounds=3)
    assert res.passed and res.rounds == 2 and res.code == TGT and res.unmet == []
    assert res.history[0]["unmet"] == [rules[1].text]
    assert "These rules are still unmet:\n- switch from `_ in list(_)`" in lm.requests[1]
    assert "switch from `eval(_)` to `int(_)`" in lm.requests[0]     # rules in context
    # a model that never answers in the format: stops after max_rounds, nothing passed
    res = editor.iterative_edit(ScriptedLM(lambda t: "sorry"), SRC, rules, run_tests=run_tests,
                                backend=be, max_rounds=2)
    assert not res.passed and res.rounds == 2 and res.code is None


@pytest.fixture(scope="module")
def he_pairs():
    ps, _ = pairs.build_pairs(humaneval.load(limit=25), max_rules=1, max_pairs_per_problem=1,
                              max_chars=600, run_tests=False)
    return ps


def test_perturbations_preserve_test_outcome_and_rules(he_pairs):
    checked = 0
    for i, p in enumerate(he_pairs[:8]):
        prob = humaneval.get(p.task_id)
        for kind in perturb.KINDS:
            s = perturb.perturb(kind, p.source, seed=i)
            if s is None:
                continue
            assert s != p.source
            if kind != "reorder":
                assert set(library.detected(s)) == set(p.rules)
            if kind in ("rename", "reorder") or (kind == "dead_code" and i < 3):
                assert pairs.grade_unit(prob, p.context, s).passed
                checked += 1
    assert checked >= 4


def test_perturbation_details():
    code = "def f(xs, n):\n    a = n + 1\n    b = 2\n    t = 0\n    for x in xs:\n        t += x * a * b\n    return t"
    r = perturb.rename(code, seed=0)
    assert "xs" in r and "def f(xs, n)" in r and " a = " not in r and " t = " not in r
    env1, env2 = {}, {}
    exec(code, env1)
    exec(r, env2)
    assert env1["f"]([1, 2], 3) == env2["f"]([1, 2], 3)
    d = perturb.dead_code(code)
    assert "if False:" in d
    o = perturb.reorder(code, seed=0)
    assert o is not None and o != code
    exec(o, env2)
    assert env1["f"]([1, 2], 3) == env2["f"]([1, 2], 3)
    assert perturb.reorder("def f(x):\n    return x") is None
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturb.perturb("shuffle", code)


def test_rule_prediction_counts_generated_rule_lines():
    from lib.editlord.evaluation import rule_prediction
    ps = [Pair("a", "", "", "x", "y", ()), Pair("b", "", "", "x", "y", ())]
    replies = [editor.rules_text([rulebook.Rule("r1", ()), rulebook.Rule("r2", ())]) + "\n[EDITED CODE]\n",
               "[EDITED CODE]\nx\n[/EDITED CODE]"]
    rp = rule_prediction(ps, replies, {"a": ["r1"], "b": ["r3"]})
    assert rp == {"precision": 0.5, "recall": 0.5, "generated": 2, "gold": 2}
    assert editor.parse_rules(editor.rules_text([])) == []       # "- none" is no rule
