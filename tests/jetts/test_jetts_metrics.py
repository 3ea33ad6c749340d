"""JETTS metrics: normalized helpfulness anchors, bootstrap CIs, simulated-judge rates."""
import numpy as np
import pytest

from lib.jetts import judges, metrics, protocols
from lib.jetts.pools import Query, Response


def test_helpfulness_zero_for_greedy_one_for_oracle():
    rng = np.random.default_rng(0)
    pools = [rng.integers(0, 2, size=10).astype(float) for _ in range(50)]
    greedy = [p[0] for p in pools]
    oracle = [p.max() for p in pools]
    rand = [p.mean() for p in pools]
    assert metrics.summarize(greedy, greedy, oracle, rand)["helpfulness"] == 0.0
    s = metrics.summarize(oracle, greedy, oracle, rand)
    assert s["helpfulness"] == 1.0 and s["top1"] == s["oracle"]
    assert s["helpfulness_ci"] == [1.0, 1.0]
    worst = [p.min() for p in pools]
    assert metrics.summarize(worst, greedy, oracle, rand)["helpfulness"] < 0
    assert np.isnan(metrics.normalized_helpfulness(0.5, 0.7, 0.7))
    with pytest.raises(ValueError, match="equal"):
        metrics.summarize([1.0], [1.0, 0.0], [1.0], [1.0])


def test_oracle_and_greedy_judges_through_reranking():
    rng = np.random.default_rng(1)
    q = Query("q", "p", "test")
    chosen, greedy, oracle, rand = [], [], [], []
    for k in range(30):
        scores = rng.integers(0, 2, size=6).astype(float)
        resp = [Response(f"r{i}", s, greedy=i == 0) for i, s in enumerate(scores)]
        r = protocols.rerank(judges.OracleJudge(), q, resp, "likert", rng)
        chosen.append(scores[r.top]); greedy.append(scores[0])
        oracle.append(scores.max()); rand.append(scores.mean())
    assert metrics.summarize(chosen, greedy, oracle, rand)["helpfulness"] == 1.0


def test_bootstrap_ci_covers_and_shrinks():
    rng = np.random.default_rng(2)
    c = rng.random(400) < 0.6
    s = metrics.summarize(c, np.zeros(400), np.ones(400), np.full(400, 0.5), num_bootstrap=500)
    lo, hi = s["top1_ci"]
    assert lo < s["top1"] < hi and hi - lo < 12
    s2 = metrics.summarize(c[:40], np.zeros(40), np.ones(40), np.full(40, 0.5), num_bootstrap=500)
    assert s2["top1_ci"][1] - s2["top1_ci"][0] > hi - lo


def test_simulated_judge_accuracy_length_bias_and_ties():
    q = Query("q", "p", "test")
    a, b = Response("short", 1.0), Response("a much longer text", 0.0)
    j = judges.SimulatedJudge(judges.SimulatedSpec(accuracy=0.8), seed=0)
    v = np.array([x.value for x in j.compare(q, [(a, b)] * 4000)])
    assert np.mean(v == 0.0) == pytest.approx(0.8, abs=0.02)
    j = judges.SimulatedJudge(judges.SimulatedSpec(accuracy=1.0, length_bias=0.5, tie_rate=0.2))
    v = np.array([x.value for x in j.compare(q, [(a, b)] * 4000)])
    assert np.mean(v == 0.5) == pytest.approx(0.2, abs=0.02)
    assert np.mean(v == 1.0) == pytest.approx(0.5, abs=0.02)   # the longer (wrong) one
    rep = metrics.merge_bias([metrics.pairwise_bias(
        [(0, 1, x) for x in v[:1000]], lengths=[len(a.text), len(b.text)])])
    assert rep["longer_win_rate"] == pytest.approx(0.5 / 0.8, abs=0.04)
    with pytest.raises(ValueError, match="<= 1"):
        judges.SimulatedSpec(position_bias=0.6, length_bias=0.6)
    with pytest.raises(ValueError, match="accuracy"):
        judges.SimulatedSpec(accuracy=1.5)


def test_ratio_ci_is_exact_for_a_constant_ratio_and_covers_the_pooled_one():
    assert metrics.ratio_ci([1, 2, 3], [2, 4, 6], num_bootstrap=50) == [0.5, 0.5]
    lo, hi = metrics.ratio_ci([0, 4, 1, 3], [4, 4, 4, 4], num_bootstrap=200)
    assert lo < 8 / 16 < hi
    assert all(np.isnan(metrics.ratio_ci([0, 0], [0, 0], num_bootstrap=10)))
    with pytest.raises(ValueError, match="equal"):
        metrics.ratio_ci([1], [1, 2])


def test_rerank_vs_greedy_reads_chance_and_greedy_off_the_cis():
    from lib.jetts.report import rerank_vs_greedy
    row = lambda acc, d: {"judge_accuracy": 0.6, "judge_accuracy_ci": acc, "top1": 40.0,
                          "greedy": 30.0, "minus_greedy_ci": d}
    an = rerank_vs_greedy({"oracle/score": row([1, 1], [1, 2]), "a": row([0.55, 0.7], [2, 9]),
                           "b": row([0.45, 0.7], [-2, 9]), "c": row([0.2, 0.4], [-9, -1])})
    assert set(an) == {"a", "b", "c"} and an["a"]["minus_greedy"] == 10.0
    assert [(an[k]["chance"], an[k]["vs_greedy"]) for k in "abc"] == [
        ("above", "better"), ("at", "tie"), ("below", "worse")]
