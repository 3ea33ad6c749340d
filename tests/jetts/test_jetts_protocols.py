"""JETTS protocols: round robin, knockout, beam search, refinement, parse-failure handling."""

import numpy as np
import pytest

from lib.jetts import judges, metrics, protocols
from lib.jetts.pools import Query, Response
from tests.jetts.jetts_fakes import ScriptedLM, random_tree

Q = Query("q0", "2+2", "test")


def _pool(scores, lengths=None):
    lengths = lengths or [5] * len(scores)
    return [Response("x" * n, s, greedy=(i == 0)) for i, (s, n) in enumerate(zip(scores, lengths))]


def test_round_robin_equals_brute_force_count():
    spec = judges.SimulatedSpec(accuracy=0.6, position_bias=0.2, tie_rate=0.2,
                                malformed_rate=0.1)
    judge = judges.SimulatedJudge(spec, seed=3)
    rng = np.random.default_rng(0)
    resp = _pool([0.0, 1.0, 0.5, 1.0, 0.25])
    r = protocols.rerank_round_robin(judge, Q, resp, rng)
    assert r.calls == 5 * 4 == len(r.verdicts)
    # brute force: every verdict gives half a point split by s (both orders of each pair)
    brute = np.zeros(5)
    for a, b, s in r.verdicts:
        brute[a] += (1 - s) / 2
        brute[b] += s / 2
    np.testing.assert_allclose(r.totals, brute)
    assert r.totals.sum() == pytest.approx(10)                # one point per unordered pair
    assert r.ranking[0] == r.top == int(np.argmax(r.totals + 0)) or \
        r.totals[r.top] == r.totals.max()


def test_round_robin_perfect_judge_counts_wins():
    judge = judges.SimulatedJudge(judges.SimulatedSpec(accuracy=1.0))
    scores = [0.3, 0.9, 0.1, 0.5]
    r = protocols.rerank_round_robin(judge, Q, _pool(scores), np.random.default_rng(0))
    np.testing.assert_allclose(r.totals, [1, 3, 0, 2])       # number of responses beaten
    assert r.ranking == [1, 3, 0, 2]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9])
def test_knockout_with_perfect_judge_returns_best(n):
    for seed in range(5):
        rng = np.random.default_rng(seed)
        scores = list(rng.permutation(n) / max(n, 1))
        judge = judges.SimulatedJudge(judges.SimulatedSpec(accuracy=1.0), seed=seed)
        r = protocols.rerank_knockout(judge, Q, _pool(scores), rng)
        assert r.top == int(np.argmax(scores))
        assert r.calls == 2 * (n - 1)                       # n - 1 games, both orders
        assert r.ranking is None


def test_knockout_cannot_rank_a_beam():
    with pytest.raises(ValueError, match="knockout"):
        protocols.beam_search(judges.OracleJudge(), random_tree(np.random.default_rng(0)),
                              "knockout", np.random.default_rng(0))


@pytest.mark.parametrize("method", ["likert", "round_robin"])
@pytest.mark.parametrize("n,m,depth", [(4, 2, 3), (6, 3, 2), (2, 2, 4)])
def test_beam_search_with_oracle_reaches_best_leaf(method, n, m, depth):
    for seed in range(4):
        tree = random_tree(np.random.default_rng(seed), n, m, depth)
        res = protocols.beam_search(judges.OracleJudge(), tree, method,
                                    np.random.default_rng(seed))
        assert tree.nodes[res.leaf].leaf
        assert res.score == tree.best_leaf_score()
        assert res.rounds == depth - 1
        if method == "likert":      # N ratings per round, then a final rating of N leaves
            assert res.calls == n * depth


def test_beam_search_lookahead_judges_rollouts():
    tree = random_tree(np.random.default_rng(1), 4, 2, 3)
    seen = []

    class Spy(judges.OracleJudge):
        def scores(self, query, responses, partial):
            seen.append((partial, [r.text for r in responses]))
            return super().scores(query, responses, partial)

    protocols.beam_search(Spy(), tree, "likert", np.random.default_rng(0), lookahead=True)
    first = [tree.nodes[i].rollout for i in tree.nodes[0].children]
    assert seen[0] == (False, first)                      # full rollouts, no partial note
    protocols.beam_search(Spy(), tree, "likert", np.random.default_rng(0))
    assert seen[-(tree.depth)][0] is True                 # prefixes judged as partial


def test_greedy_first_children_and_greedy_leaf():
    tree = random_tree(np.random.default_rng(2), 4, 2, 3)
    for nd in tree.nodes:
        if nd.children and nd.parent >= 0:
            assert [tree.nodes[c].greedy for c in nd.children] == [True, False]
    g = tree.greedy_leaf()
    assert tree.nodes[g].leaf and tree.nodes[tree.nodes[g].parent].children[0] == g


def test_single_rerank_tie_noise_and_parse_failures_are_counted():
    judge = judges.SimulatedJudge(judges.SimulatedSpec(accuracy=1.0, malformed_rate=0.4),
                                  seed=1)
    resp = _pool([0.0, 1.0, 0.5, 0.75, 0.25] * 4)
    r = protocols.rerank_single(judge, Q, resp, "likert", np.random.default_rng(0))
    st = judge.stats["single"]
    assert st["calls"] == 20 and st["parse_failures"] == r.parse_failures > 0
    assert st["failure_examples"][0] == judges.MALFORMED
    assert set(r.totals) <= {1.0, 2.0, 3.0, 4.0, 5.0}        # fallbacks are random 1..5
    assert sorted(r.ranking) == list(range(20))             # nothing dropped


def test_prompted_judge_parsers_and_fallbacks():
    outputs = iter(["Feedback: fine. [RESULT] 4", "[RESULT] 7", "no verdict at all",
                    "Feedback: B is right [RESULT] B", "Feedback: [RESULT] A", "[RESULT] maybe"])
    lm = ScriptedLM(lambda prompt: next(outputs))
    j = judges.PromptedJudge(lm, "prometheus", seed=0)
    rs = j.rate(Q, _pool([1, 0, 0]))
    assert [x.parsed for x in rs] == [True, False, False]
    assert rs[0].value == 4.0 and rs[0].critique == "fine."
    assert all(1 <= x.value <= 5 for x in rs)
    vs = j.compare(Q, [(Response("a", 0), Response("b", 1))] * 3)
    assert [x.value for x in vs[:2]] == [1.0, 0.0] and vs[0].critique == "B is right"
    assert not vs[2].parsed and vs[2].value in (0.0, 1.0) and vs[2].text == "[RESULT] maybe"
    assert j.stats["single"]["parse_failures"] == 2 and j.stats["pairwise"]["parse_failures"] == 1
    assert "###Response A:\na" in lm.prompts[3] and "###Response B:\nb" in lm.prompts[3]
    sfr = judges.get_format("sfr")
    assert sfr.parse_pairwise("**Reasoning:** x\n**Result:** B") == (1.0, "x")
    assert sfr.parse_single("**Reasoning:** y **Result:** 2", 5) == (2.0, "y")
    assert "streaming" in judges.get_format("prometheus").single_prompt("q", "r", "likert", True)
    assert "additive" in judges.get_format("compact").single_prompt("q", "r", "additive", False)
    with pytest.raises(ValueError, match="unknown judge format"):
        judges.get_format("nope")
    with pytest.raises(ValueError, match="rubric"):
        j.rate(Q, _pool([1]), rubric="stars")


def test_position_bias_cancelled_by_both_orders():
    """Equal-quality pools, a judge that says "A" with probability p: with one order the
    expected total of the k-th response is (n-1)/2 + p/2 (n-1-2k); both orders give (n-1)/2."""
    n, p, pools = 5, 0.5, 600
    single = np.zeros(n)
    both = np.zeros(n)
    reps = []
    for seed in range(pools):
        judge = judges.SimulatedJudge(judges.SimulatedSpec(position_bias=p), seed=seed)
        rng = np.random.default_rng(seed)
        resp = _pool([0.5] * n)
        single += protocols.rerank_round_robin(judge, Q, resp, rng, both_orders=False).totals
        r = protocols.rerank_round_robin(judge, Q, resp, rng)
        both += r.totals
        reps.append(metrics.pairwise_bias(r.verdicts))
    expected = (n - 1) / 2 + p / 2 * (n - 1 - 2 * np.arange(n))
    np.testing.assert_allclose(single / pools, expected, atol=0.12)
    np.testing.assert_allclose(both / pools, (n - 1) / 2, atol=0.08)
    rep = metrics.merge_bias(reps)
    assert rep["first_win_rate"] == pytest.approx(0.5 + p / 2, abs=0.02)
    q = 0.5 + p / 2          # P(first shown wins) in each order; consistent = same winner
    assert rep["consistency"] == pytest.approx(2 * q * (1 - q), abs=0.03)


def test_refinement_loops_stops_and_reranks_all_iterations():
    replies = iter(["<revised_response>v1</revised_response>",
                    "sure: <revised_response>v2</revised_response>", "No revision needed."])
    refiner = ScriptedLM(lambda prompt: next(replies))
    grades = {"v0": 0.0, "v1": 1.0, "v2": 0.5}
    grade = lambda q, text: grades[text]
    res = protocols.refine_single(judges.OracleJudge(), refiner, Q, Response("v0", 0.0),
                                  grade, np.random.default_rng(0), max_iterations=5)
    assert [r.text for r in res.responses] == ["v0", "v1", "v2"]
    assert (res.stop_reason, res.iterations, res.top, res.score) == ("no_revision", 2, 1, 1.0)
    assert "score 1 out of 5" in refiner.prompts[0] or "score 0 out of 5" in refiner.prompts[0]
    bad = ScriptedLM(lambda prompt: "I think it is fine")
    res = protocols.refine_single(judges.OracleJudge(), bad, Q, Response("v0", 0.0), grade,
                                  np.random.default_rng(0))
    assert (res.stop_reason, res.refiner_parse_failures, res.iterations) == ("parse_failure", 1, 0)
    # pairwise: the new response is paired with the better previous one
    replies2 = iter(["<revised_response>v1</revised_response>",
                     "<revised_response>v2</revised_response>"])
    ref2 = ScriptedLM(lambda prompt: next(replies2))
    res = protocols.refine_pairwise(judges.OracleJudge(), ref2, Q, Response("v0", 0.0),
                                    Response("v2", 0.5), grade, np.random.default_rng(0),
                                    max_iterations=2)
    assert "A v2" not in ref2.prompts[0] and "response B is better" in ref2.prompts[0]
    assert "### Response A:\nv2" in ref2.prompts[1] and "### Response B:\nv1" in ref2.prompts[1]
    assert res.stop_reason == "max_iterations" and res.score == 1.0


def test_parse_refinement():
    assert protocols.parse_refinement("x <revised_response> a\nb </revised_response>") == \
        ("revised", "a\nb")
    assert protocols.parse_refinement("NO REVISION NEEDED") == ("no_revision", None)
    assert protocols.parse_refinement("hmm") == ("parse_failure", None)


def test_replies_cut_at_max_tokens_are_counted_as_truncated():
    """A reply that stopped at max_tokens (finish reason "length") is flagged and counted,
    whether or not its verdict survived; the rate is over all calls."""
    cut = judges.PromptedJudge(ScriptedLM(lambda p: "Feedback: A steps so far cor",
                                          finish="length"), "prometheus", seed=0)
    rs = cut.rate(Q, _pool([1, 0]))
    vs = cut.compare(Q, [(Response("a", 0), Response("b", 1))])
    assert all(x.truncated and not x.parsed for x in rs + vs)
    assert cut.stats["single"]["truncated"] == 2 and cut.stats["pairwise"]["truncated"] == 1
    assert judges.truncation_rate(cut.stats) == (1 + 2, 3, 1.0)
    ok = judges.PromptedJudge(ScriptedLM(lambda p: "Feedback: x [RESULT] 3"), "prometheus")
    assert not ok.rate(Q, _pool([1]))[0].truncated
    assert judges.truncation_rate(ok.stats) == (0, 1, 0.0)
    # a cut reply whose verdict survived is still counted as cut (it parsed)
    late = judges.PromptedJudge(ScriptedLM(lambda p: "[RESULT] 2 and then", finish="length"),
                                "prometheus")
    (j,) = late.rate(Q, _pool([1]))
    assert j.parsed and j.truncated and late.stats["single"]["truncated"] == 1
