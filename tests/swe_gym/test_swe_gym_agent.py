"""The agent loop, its caps, the policies, RFT selection and the verifier helpers."""
import json

import numpy as np
import pytest

from lib.lm import chat, client, sft
from lib.swe_gym import agent, grader, policies, rft, runtime, verifier


class _Fixed:
    """A policy replaying `make(turn)` tool calls."""
    name = "fixed"

    def __init__(self, make, tokens=0):
        self.make, self.tokens = make, tokens

    def reset(self, instance):
        self.turn = 0

    def act(self, messages):
        self.turn += 1
        return {"content": "", "tool_calls": self.make(self.turn)}

    def count_tokens(self, messages):
        return self.tokens


def _bash(cmd):
    return [chat.make_tool_call("execute_bash", {"command": cmd}, "c")]


def test_looping_agent_stopped_at_its_caps(gym):
    store, _, insts = gym
    caps = agent.Caps(max_turns=5, loop_window=3)
    t = agent.run_episode(insts[0], _Fixed(lambda i: _bash("ls")), store, caps)
    assert t.exit_reason == "stuck_in_loop" and t.turns == 3 and t.patch == ""
    t = agent.run_episode(insts[0], _Fixed(lambda i: _bash(f"echo {i}")), store, caps)
    assert t.exit_reason == "max_turns" and t.turns == 5
    assert t.messages[-1]["content"].startswith("5\n[exit code 0]")
    t = agent.run_episode(insts[0], _Fixed(lambda i: _bash("ls"), tokens=10 ** 6), store, caps)
    assert t.exit_reason == "context_exceeded" and t.turns == 0


def test_tools_edit_persist_and_refuse_bad_paths(gym):
    store, _, insts = gym
    ed = lambda **a: chat.make_tool_call("str_replace_editor", a, "e")   # noqa: E731
    script = {1: [ed(command="create", path="notes.txt", file_text="a\nb\n"),
                  ed(command="insert", path="notes.txt", insert_line=1, new_str="x"),
                  ed(command="str_replace", path="notes.txt", old_str="b", new_str="c"),
                  ed(command="view", path="notes.txt"),
                  ed(command="view", path="../../etc/passwd"),
                  ed(command="str_replace", path="notes.txt", old_str="zzz", new_str="c"),
                  _bash("echo y >> notes.txt")[0]],
              2: [_bash("cat notes.txt")[0], chat.make_tool_call("finish", {}, "f")]}
    t = agent.run_episode(insts[0], _Fixed(lambda i: script[i]), store)
    obs = [m["content"] for m in t.messages if m["role"] == "tool"]
    assert obs[3] == "     1\ta\n     2\tx\n     3\tc"
    assert "outside the repository" in obs[4] and "occurs 0 times" in obs[5]
    assert obs[7].startswith("a\nx\nc\ny") and t.exit_reason == "finish"
    assert "+++ b/notes.txt" in t.patch


def _flip_instance(insts):
    return next(i for i in insts if i["bug_kind"] == "flip_comparison")


class _FakeLM(client.LanguageModel):
    """Answers from a list of assistant texts (and records the requests)."""
    name = "fake"

    def __init__(self, replies, tool_calls=None):
        self.replies, self.tool_calls, self.requests = list(replies), tool_calls, []

    def chat(self, messages, **kw):
        self.requests.append((messages, kw))
        text = self.replies.pop(0)
        calls = self.tool_calls.pop(0) if self.tool_calls else []
        return client.ChatResult([client.Choice(0, text, calls, "stop", None)], self.name)

    def complete(self, prompt, **kw):
        raise NotImplementedError


def test_chat_policy_applies_a_served_models_tool_calls(gym):
    store, cache, insts = gym
    inst = insts[0]
    calls = [[chat.make_tool_call("str_replace_editor", {"command": "create", "path": "fix.diff",
                                                         "file_text": inst["patch"]}, "a")],
             [chat.make_tool_call("execute_bash", {"command": "git apply fix.diff && rm fix.diff"}, "b")],
             [chat.make_tool_call("finish", {}, "c")]]
    lm = _FakeLM(["", "", ""], calls)
    t = agent.run_episode(inst, policies.ChatPolicy(lm), store)
    assert t.exit_reason == "finish" and lm.requests[0][1]["tools"] == agent.TOOLS
    assert grader.grade(inst, t.patch, store, cache=cache).resolved


def test_workspace_lm_policy_plumbing(gym):
    store, cache, insts = gym
    inst = _flip_instance(insts)
    m = inst["mutations"][0]
    with runtime.Workspace.checkout(store, inst["repo"], inst["base_commit"]) as ws:
        buggy = open(f"{ws.path}/{m['path']}").read().splitlines()
        ws.apply_patch(inst["patch"])
        fixed = open(f"{ws.path}/{m['path']}").read().splitlines()[m["lineno"] - 1]
    op = policies.op_for(dict(enumerate(buggy, 1)), m["lineno"], fixed)
    assert op == "flip"
    lm = _FakeLM(["garbage", policies.lm_action_text("fix", {"line": 999, "op": "flip"}),
                  policies.lm_action_text("fix", {"line": m["lineno"], "op": op}),
                  policies.lm_action_text("finish", {})])
    pol = policies.WorkspaceLMPolicy(lm, max_edits=3)
    t = agent.run_episode(inst, pol, store)
    lm_msgs = t.extra["lm_messages"]
    obs = [x["content"] for x in lm_msgs if x["role"] == "tool"]
    assert obs[:2] == ["invalid: write one tool call", "invalid: line not shown"]
    assert obs[2].startswith("REPRO") and obs[2].split()[1].split("/")[0] == obs[2].split("/")[1]
    assert f"{m['lineno']}| " in lm_msgs[1]["content"]
    assert grader.grade(inst, t.patch, store, cache=cache).resolved


def test_apply_op_actions():
    lines = dict(enumerate(["def f(a, b=2):", "    if a < b + 1:", "        return g(a, b)",
                            "    return 0"], 1))
    assert policies.apply_op(lines, 2, "flip") == "    if a <= b + 1:"
    assert policies.apply_op(lines, 2, "inc") == "    if a < b + 2:"
    assert policies.apply_op(lines, 1, "dec") == "def f(a, b=1):"
    assert policies.apply_op(lines, 3, "swap") == "        return g(b, a)"
    assert policies.apply_op(lines, 3, "flip") is None and policies.apply_op(lines, 9, "inc") is None
    assert policies.op_for(lines, 4, "    return -1") == "dec"


def _rec(iid, rollout, resolved, calls):
    msgs = [{"role": "user", "content": "u"}] + [{"role": "assistant", "content": "a"}] * calls
    return {"instance_id": iid, "rollout": rollout, "resolved": resolved,
            "trajectory": {"messages": msgs, "extra": {"lm_messages": msgs}}}


def test_rft_caps_prefer_fewer_calls_and_export(tmp_path):
    recs = [_rec("a", 0, True, 3), _rec("a", 1, True, 1), _rec("a", 2, True, 2),
            _rec("a", 3, False, 1), _rec("b", 0, True, 5)]
    assert [(r["instance_id"], r["rollout"]) for r in rft.select(recs, 1)] == [("a", 1), ("b", 0)]
    assert [r["rollout"] for r in rft.select(recs, 2)] == [1, 2, 0]
    assert len(rft.select(recs, None)) == 4
    with pytest.raises(ValueError, match="cap = 0"):
        rft.select(recs, 0)
    path = str(tmp_path / "t.jsonl")
    assert rft.export_chat_jsonl(path, recs) == 4
    assert len(sft.load_chat_jsonl(path)) == 4
    assert json.loads(open(path).readline())["tools"] == agent.TOOLS


def test_verifier_data_balanced_and_auc():
    recs = [_rec("a", i, i < 3, 1) for i in range(4)] + [_rec("b", i, False, 1) for i in range(5)]
    convs = verifier.training_conversations(recs, cap_positive=2, seed=0)
    answers = [c[-1]["content"] for c in convs]
    assert answers.count("YES") == 2 and answers.count("NO") == 2
    with pytest.raises(ValueError, match="both classes"):
        verifier.training_conversations([r for r in recs if not r["resolved"]])
    m = verifier.accuracy([0.9, 0.2, 0.6, 0.1], [True, False, False, True])
    assert m["accuracy"] == 0.5 and m["auc"] == 0.5
    assert verifier.accuracy([0.9, 0.8, 0.1], [True, True, False])["auc"] == 1.0
    assert np.isnan(verifier.accuracy([0.1], [True])["auc"])


def test_pretrain_examples_are_the_policys_format_and_repair_the_line():
    from lib.swe_gym import pretrain, repos, templates
    spec = repos.RepoSpec("k", {"numeric": ("clamp", "sign")})
    src = repos.module_source("numeric", ("clamp", "sign")).splitlines()
    convs = pretrain.examples([spec], 20, seed=1)
    assert len(convs) == 20
    for conv in convs:
        assert [m["role"] for m in conv] == ["system", "user", "assistant", "tool", "assistant"]
        _, calls = chat.parse_local_tool_calls(conv[2]["content"])
        act = json.loads(calls[0]["function"]["arguments"])
        shown = {int(a): b for a, b in (ln.split("| ", 1) for ln in conv[1]["content"].splitlines()[1:])}
        assert shown[act["line"]] != src[act["line"] - 1]          # the prompt shows the bug
        bug = dict(enumerate(src, 1))
        bug[act["line"]] = shown[act["line"]]
        assert policies.apply_op(bug, act["line"], act["op"]) == src[act["line"] - 1]
        assert conv[1]["content"].startswith("assert ")
        assert chat.parse_local_tool_calls(conv[4]["content"])[1][0]["function"]["name"] == "finish"
    assert {f.name for f in templates.NUMERIC} >= {"clamp", "sign"}


def test_verifier_fits_long_trajectories_and_scores_a_probability():
    import jax

    from lib.lm.local import LocalLM
    from lib.lm.model import LMConfig, init_params
    from lib.lm.tokenizer import Tokenizer
    tok = Tokenizer()
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=16, num_layers=1, num_heads=2, d_ff=32,
                   max_len=96)
    lm = LocalLM(cfg, init_params(cfg, jax.random.key(0)), tok)
    msgs = [{"role": "system", "content": "S"},
            {"role": "user", "content": "ISSUE\n" + "\n".join(f"line {i}" for i in range(40)) + "\nEND"}]
    fitted = verifier.fit_to_context(lm, msgs)
    text = fitted[-1]["content"]
    assert lm.count_tokens(chat.render_chat(fitted)) <= cfg.max_len - 8
    assert text.startswith("ISSUE") and text.endswith("END") and "[...]" in text
    assert 0.0 < verifier.p_yes(lm, msgs) < 1.0
