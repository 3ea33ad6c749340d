"""Expert iteration: grade cache, batched sampling pool, warm-start data, paired tests."""
import pytest

from lib.toolbox import stats
from lib.lm import chat, client
from lib.swe_gym import agent, expert_iteration, grader, policies, rft, runtime


def _flip_instance(insts):
    return next(i for i in insts if i["bug_kind"] == "flip_comparison")


def test_grade_cache_grades_a_duplicate_patch_once(gym, tmp_path, monkeypatch):
    store, cache, insts = gym
    inst = _flip_instance(insts)
    calls = []
    real = grader.grade
    monkeypatch.setattr(grader, "grade", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    gc = grader.GradeCache(str(tmp_path / "grades"))
    first = gc.grade(inst, inst["patch"], store, cache=cache)
    again = gc.grade(inst, inst["patch"], store, cache=cache)
    empty = gc.grade(inst, "", store, cache=cache)
    assert len(calls) == 2 and (gc.graded, gc.hits) == (2, 1)
    assert first.resolved and again.resolved and again.cached and not empty.resolved
    assert again.f2p_success == first.f2p_success and again.status == first.status
    # the same patch on another instance is a different key; verdicts persist on disk
    other = {**inst, "instance_id": inst["instance_id"] + "_copy"}
    assert grader.GradeCache.key(inst, "x") != grader.GradeCache.key(other, "x")
    reloaded = grader.GradeCache(str(tmp_path / "grades"))
    assert reloaded.grade(inst, inst["patch"], store).resolved and reloaded.graded == 0
    assert len(calls) == 2
    # collect: two rollouts writing the same patch are graded once
    gc2 = grader.GradeCache()
    fixed = {"c": 0}

    class Gold:
        name = "gold"

        def reset(self, instance):
            self.done = False

        def act(self, messages):
            if self.done:
                return {"content": "", "tool_calls": [chat.make_tool_call("finish", {}, "f")]}
            self.done = True
            fixed["c"] += 1
            return {"content": "", "tool_calls": [
                chat.make_tool_call("str_replace_editor", {"command": "create", "path": "g.diff",
                                                           "file_text": inst["patch"]}, "a"),
                chat.make_tool_call("execute_bash", {"command": "git apply g.diff && rm g.diff"},
                                    "b")]}

        def count_tokens(self, messages):
            return 0
    recs = rft.collect([inst], lambda i, r: Gold(), store, rollouts=2, cache=cache,
                       grade_cache=gc2)
    assert fixed["c"] == 2 and [r["resolved"] for r in recs] == [True, True]
    assert (gc2.graded, gc2.hits) == (1, 1)


class _CountingLM(client.LanguageModel):
    """Returns `n` numbered samples per call and records each call's n and seed."""
    name = "counting"

    def __init__(self):
        self.calls = []

    def chat(self, messages, n=1, **kw):
        self.calls.append((messages[-1]["content"], n, kw["seed"]))
        k = len(self.calls)
        return client.ChatResult([client.Choice(j, f"s{k}.{j}", [], "stop", None)
                                  for j in range(n)], self.name)

    def complete(self, prompt, **kw):
        raise NotImplementedError

    def count_tokens(self, text):
        return len(text)


def test_pooled_lm_draws_batches_and_hands_out_each_sample_once():
    lm = _CountingLM()
    pool = expert_iteration.PooledLM(lm, 3, seed=5)
    a = [{"role": "user", "content": "A"}]
    b = [{"role": "user", "content": "B"}]
    texts = [pool.chat(a, temperature=1.0, max_tokens=8).texts[0] for _ in range(4)]
    assert texts == ["s1.0", "s1.1", "s1.2", "s2.0"]          # refilled when dry
    assert pool.chat(b, temperature=1.0, max_tokens=8).texts[0] == "s3.0"
    assert pool.chat(a, temperature=0.5, max_tokens=8).texts[0] == "s4.0"   # other T: new pool
    assert [c[1] for c in lm.calls] == [3, 3, 3, 3] and len({c[2] for c in lm.calls}) == 4
    assert (pool.draws, pool.requests) == (4, 6)
    with pytest.raises(ValueError, match="pool size"):
        expert_iteration.PooledLM(lm, 0)


class _Replay(client.LanguageModel):
    name = "replay"

    def __init__(self, texts):
        self.texts = list(texts)

    def chat(self, messages, **kw):
        return client.ChatResult([client.Choice(0, self.texts.pop(0), [], "stop", None)], "r")

    def complete(self, prompt, **kw):
        raise NotImplementedError

    def count_tokens(self, text):
        return len(text) // 4


def test_search_demonstration_replays_to_a_resolution(gym, monkeypatch):
    store, cache, insts = gym
    inst = _flip_instance(insts)
    rec = rft.collect([inst], lambda i, r: policies.SearchPolicy(), store, rollouts=1,
                      cache=cache, caps=agent.Caps(max_turns=30))[0]
    assert rec["trajectory"]["exit_reason"] == "finish" and rec["resolved"]
    demo = expert_iteration.search_demonstration(rec, max_edits=2)
    assert demo is not None and demo[-1]["content"] == policies.lm_action_text("finish", {})
    # the workspace-LM policy, replaying the demonstration's actions, sees the same
    # observations and resolves the instance
    replies = [m["content"] for m in demo if m["role"] == "assistant"]
    t = agent.run_episode(inst, policies.WorkspaceLMPolicy(_Replay(replies), max_edits=2), store)
    assert t.extra["lm_messages"] == demo
    assert grader.grade(inst, t.patch, store, cache=cache).resolved
    # the episode memo: a repeated action sequence needs no checkout and gives the same
    # trajectory; a new action checks out once, replays the earlier calls, then diverges
    memo, checkouts = {}, []
    real = runtime.Workspace.checkout
    monkeypatch.setattr(runtime.Workspace, "checkout",
                        lambda *a: checkouts.append(1) or real(*a))
    t1 = agent.run_episode(inst, policies.WorkspaceLMPolicy(_Replay(replies), max_edits=2),
                           store, memo=memo)
    t2 = agent.run_episode(inst, policies.WorkspaceLMPolicy(_Replay(replies), max_edits=2),
                           store, memo=memo)
    assert len(checkouts) == 1 and t2.messages == t1.messages == t.messages
    assert t2.patch == t1.patch == t.patch
    quit_now = [policies.lm_action_text("finish", {})]
    t3 = agent.run_episode(inst, policies.WorkspaceLMPolicy(_Replay(quit_now), max_edits=2),
                           store, memo=memo)
    assert len(checkouts) == 2 and t3.patch.strip() and "reproduce.py" in t3.patch
    assert inst["patch"].splitlines()[0] not in t3.patch
    assert t3.messages[:4] == t.messages[:4]
    # records it cannot express are dropped
    assert expert_iteration.search_demonstration({**rec, "resolved": False}, 2) is None
    assert expert_iteration.search_demonstration(rec, max_edits=0) is None
    bad = {**rec, "trajectory": {**rec["trajectory"], "extra": {
        **rec["trajectory"]["extra"],
        "edits": [{**e, "op": None} for e in rec["trajectory"]["extra"]["edits"]]}}}
    assert expert_iteration.search_demonstrations([rec, bad], 2) == [demo]


def test_mcnemar_and_wilson():
    r = expert_iteration.mcnemar_p([False] * 5 + [True], [True] * 5 + [True])
    assert (r["wins"], r["losses"]) == (5, 0) and r["p"] == pytest.approx(1 / 32)
    r = expert_iteration.mcnemar_p([True, False, False], [False, True, False])
    assert (r["wins"], r["losses"], r["p"]) == (1, 1, 0.75)
    assert expert_iteration.mcnemar_p([True], [True])["p"] == 1.0
    with pytest.raises(ValueError, match="length"):
        expert_iteration.mcnemar_p([True], [])
    lo, hi = stats.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = stats.wilson_interval(5, 10)
    assert lo == pytest.approx(1 - hi) and lo == pytest.approx(0.2366, abs=1e-4)
