"""JETTS on the workspace LM: trees and pools from a sampler, batched local judging,
ORM / PRM heads (read-out positions, causal prefix invariance, training lowers the loss)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.jetts import generators, judges, reward_models, training
from lib.jetts.domains import arithmetic as ar
from lib.jetts.pools import Response
from lib.lm import tasks
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig, init_params
from lib.lm.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def lm():
    tok = Tokenizer()
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=16, num_layers=1, num_heads=2, d_ff=32,
                   max_len=96)
    return LocalLM(cfg, init_params(cfg, jax.random.key(0)), tok)


class StepSampler(generators.Sampler):
    """Deterministic steps: greedy 'g', sampled 's<k>'; a step is final at depth 3."""

    def sample(self, queries, prefixes, *, n, temperature, top_p, max_tokens, stop_at, seed):
        out = []
        for p in prefixes:
            d = len(ar.steps(p)) + 1
            tag = "=" if d == 3 else ""
            out.append([(f"{tag}{'g' if temperature == 0 else 's'}{k}d{d}", "stop")
                        for k in range(n)])
        return out


def test_trees_have_n_m_d_and_greedy_first_children():
    q = ar.make_query(tasks.Problem(1, 2), 2, "t")
    grade = lambda q, text: float(text.endswith("s0d3"))
    (tree,) = generators.make_trees(StepSampler(), [q], grade, n=4, m=2, depth=5, sep=" ",
                                    is_final=lambda s: s.startswith("="))
    nodes = tree.nodes
    assert len(nodes[0].children) == 4 and nodes[nodes[0].children[0]].greedy
    assert [nodes[c].text for c in nodes[0].children] == ["g0d1", "s0d1", "s1d1", "s2d1"]
    for nd in nodes[1:]:
        if not nd.leaf:
            assert len(nd.children) == 2
            assert [nodes[c].greedy for c in nd.children] == [True, False]
    assert all(nd.depth == 3 for nd in nodes if nd.leaf)              # is_final ended them
    assert len(tree.leaves()) == 4 * 2 * 2
    assert nodes[0].score == 1.0 and nodes[tree.greedy_leaf()].text == "g0d1 g0d2 =g0d3"
    assert nodes[nodes[0].children[1]].rollout == "s0d1 g0d2 =g0d3"   # greedy path below
    with pytest.raises(ValueError, match="multiple of M"):
        generators.make_trees(StepSampler(), [q], grade, n=3, m=2, depth=3, sep=" ",
                              is_final=lambda s: False)


def test_pools_greedy_first_and_local_sampler_matches_chat(lm):
    qs = [ar.make_query(tasks.Problem(a, 3), 2, f"q{a}") for a in (1, 25)]
    pools = generators.make_pools(generators.LocalSampler(lm), qs, ar.score, num_sampled=1,
                                  max_tokens=8)
    assert [len(p.responses) for p in pools] == [2, 2]
    assert all(p.greedy_index == 0 and not p.responses[1].greedy for p in pools)
    ref = lm.chat([{"role": "user", "content": qs[1].prompt}], temperature=0, max_tokens=8)
    assert pools[1].responses[0].text == ref.texts[0]
    # batched greedy judging equals one-by-one chat (same shapes as above: no new compile)
    prompts = ["j 1+2", "j pair"]
    for prompt, t in zip(prompts, judges.local_greedy_replies(lm, prompts, 8)):
        ref = lm.chat([{"role": "user", "content": prompt}], temperature=0, max_tokens=8)
        assert t.text == ref.texts[0]
        assert t.truncated == (ref.choices[0].finish_reason == "length")   # cut at max_tokens


def test_reward_model_positions_prefix_invariance_and_training(lm):
    q = ar.make_query(tasks.Problem(47, 85), 2, "r")
    text = "7+5+0=12 4+8+1=13 =132"
    ids, ends = reward_models.encode_one(lm.tok, q, text, " ", 96)
    assert len(ends) == 3 and lm.tok.decode(ids[ends[0]:ends[0] + 1]) == "2"
    assert ids[ends[-1]] == ids[-1]
    head = {"w": jnp.asarray(np.random.default_rng(0).normal(size=16), jnp.float32),
            "b": jnp.float32(0.1)}
    prm = reward_models.RewardModelJudge("PRM", lm.cfg, {"lm": lm.params, "head": head}, lm.tok,
                                         kind="prm", sep=" ")
    full, pre = prm.step_probs(q, [text, "7+5+0=12 4+8+1=13"])
    np.testing.assert_allclose(pre, full[:2], rtol=1e-5)                # causal: same prefix
    assert prm.scores(q, [Response(text, 1.0)], True)[0] == pytest.approx(full.min())
    orm = reward_models.RewardModelJudge("ORM", lm.cfg, {"lm": lm.params, "head": head}, lm.tok,
                                         kind="orm", sep=" ")
    assert orm.scores(q, [Response(text, 1.0)], False)[0] == pytest.approx(full[-1], rel=1e-5)
    # a few steps of training lower the PRM loss on exact step labels
    rng = np.random.default_rng(0)
    qs = ar.queries(rng, 16, 2, held_out=False)
    texts = [(" ".join(ar.reference_steps(x)) if i % 2 else ar.corrupt(x, rng)[0])
             for i, x in enumerate(qs)]
    data = reward_models.encode_examples(lm.tok, qs, texts, [ar.step_labels(x, t) for x, t in
                                                             zip(qs, texts)], kind="prm", sep=" ",
                                         max_len=96)
    assert data["mask"].sum() == 16 * 3
    task = training.make_task(lm.cfg, lm.params, data, batch_size=16, lr=3e-3, num_steps=25)
    state = task.init_state(jax.random.key(0))
    step = jax.jit(task.train_step)
    losses = []
    for s in range(25):
        state, m = step(state, task.batch_fn(s, slice(None)), jax.random.key(s))
        losses.append(float(m["loss"]))
    assert losses[-1] < 0.8 * losses[0]
    with pytest.raises(ValueError, match="kind"):
        reward_models.encode_examples(lm.tok, qs, texts, [[1]] * 16, kind="xrm", sep=" ",
                                      max_len=96)


def test_min_logprob_so_far_matches_brute_force():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 6, 5)).astype(np.float32) * 3
    tokens = rng.integers(0, 5, size=(2, 6))
    start = np.array([2, 4])
    got = np.asarray(reward_models.min_logprob_so_far(jnp.asarray(logits), jnp.asarray(tokens),
                                                      jnp.asarray(start)))
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    for b in range(2):
        for t in range(6):
            vals = [logp[b, s - 1, tokens[b, s]] for s in range(max(start[b], 1), t + 1)]
            want = max(min(vals), -20.0) if vals else 0.0
            assert got[b, t] == pytest.approx(want, abs=1e-5)


def test_context_fitted_caps_max_tokens_at_the_room_the_prompt_leaves(lm):
    from lib.lm import chat as chat_lib
    from lib.lm.local import ContextFitted
    fitted = ContextFitted(lm)
    msgs = [{"role": "user", "content": "x" * 40}]
    room = lm.cfg.max_len - lm.count_tokens(chat_lib.render_chat(msgs))
    assert 0 < room < 1000
    got = fitted.chat(msgs, temperature=0, max_tokens=1000, seed=0)
    ref = lm.chat(msgs, temperature=0, max_tokens=room, seed=0)     # what a server would do
    assert got.texts == ref.texts and got.choices[0].completion_tokens <= room
    assert fitted.chat(msgs, temperature=0, max_tokens=3, seed=0).choices[0].completion_tokens <= 3
    with pytest.raises(ValueError, match=f"no room in the context of {lm.cfg.max_len} tokens"):
        fitted.chat([{"role": "user", "content": "x" * lm.cfg.max_len}], max_tokens=4)
