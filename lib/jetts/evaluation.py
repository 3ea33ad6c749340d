"""One judge over a whole data set under each protocol: the result rows of results.json.

    rows = rerank_all(judge_set, pools, config)    # {"<judge>/<method>": eval_rerank row}
    rows = beam_all(judge_set, trees, config)      # {"<judge>/<method>[+lookahead]": row}
    rows = eval_refinement(judge, refiner, pools, config, fmt)

A row is `metrics.summarize` of the chosen responses' scores against greedy / oracle /
random (top-1 × 100, helpfulness H with CIs) plus the judge's calls, parse failures and
replies cut at max_tokens; reranking rows also hold the pair accuracy on pairs of different
correctness (with a query-bootstrap CI) and, for pairwise methods, a bias report.
"""
from __future__ import annotations

import numpy as np
from absl import logging

from lib.jetts import judges, metrics, protocols
from lib.jetts import pools as pools_lib
from lib.jetts.domains import arithmetic as ar
from lib.lm.local import ContextFitted, LocalLM

REFINE_MAX_TOKENS = 96      # a revised 3-digit working in <revised_response> tags is ~75


def _pair_accuracy(values: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    """(correctly ordered, total) over response pairs with different ground truth; ties 1/2."""
    good = tot = 0.0
    for i in range(len(scores)):
        for j in range(i + 1, len(scores)):
            if scores[i] != scores[j]:
                d = (values[i] - values[j]) * (scores[i] - scores[j])
                good += 1.0 if d > 0 else 0.5 if d == 0 else 0.0
                tot += 1
    return good, tot


def truncation(judge: judges.Judge) -> dict:
    """The judge's replies cut at max_tokens since its last `reset_stats`."""
    cut, _, rate = judges.truncation_rate(judge.stats)
    return {"truncated": cut, "truncation_rate": rate}


def _verdict_pairs(verdicts, sc: np.ndarray) -> tuple[float, float]:
    """(right, decided) pairwise verdicts on pairs of different correctness."""
    g = t = 0.0
    for a, b, s in verdicts:
        if sc[a] != sc[b] and s != 0.5:
            t += 1
            g += float((s == 0.0) == (sc[a] > sc[b]))
    return g, t


def eval_rerank(judge: judges.Judge, pools: list[pools_lib.Pool], method: str, seed: int,
                num_bootstrap: int, shuffle: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    judge.reset_stats()
    chosen, reports = [], []
    goods, tots = [], []          # per query: correctly ordered / decided pairs
    calls = fails = 0
    for pool in pools:
        resp = list(pool.responses)
        if shuffle:
            resp = [resp[i] for i in rng.permutation(len(resp))]
        r = protocols.rerank(judge, pool.query, resp, method, rng)
        sc = np.asarray([x.score for x in resp])
        chosen.append(sc[r.top])
        calls, fails = calls + r.calls, fails + r.parse_failures
        g = t = 0.0
        if r.verdicts:
            reports.append(metrics.pairwise_bias(r.verdicts, [len(x.text) for x in resp]))
            g, t = _verdict_pairs(r.verdicts, sc)
        elif r.totals is not None:
            g, t = _pair_accuracy(r.totals, sc)
        goods.append(g)
        tots.append(t)
    acc_good, acc_tot = sum(goods), sum(tots)
    out = metrics.summarize(chosen, [p.scores[p.greedy_index] for p in pools],
                            [max(p.scores) for p in pools], [np.mean(p.scores) for p in pools],
                            num_bootstrap=num_bootstrap, seed=seed)
    out.update(calls=calls, parse_failures=fails,
               judge_accuracy=acc_good / acc_tot if acc_tot else float("nan"),
               judge_accuracy_ci=metrics.ratio_ci(goods, tots, num_bootstrap=num_bootstrap,
                                                  seed=seed),
               **truncation(judge))
    if reports:
        out["bias"] = metrics.merge_bias(reports)
    return out


def eval_beam(judge: judges.Judge, trees: list[pools_lib.Tree], method: str, lookahead: bool,
              seed: int, num_bootstrap: int) -> dict:
    rng = np.random.default_rng(seed)
    judge.reset_stats()
    chosen, calls, fails = [], 0, 0
    for t in trees:
        r = protocols.beam_search(judge, t, method, rng, lookahead=lookahead)
        chosen.append(r.score)
        calls, fails = calls + r.calls, fails + r.parse_failures
    leaves = [[t.nodes[i].score for i in t.leaves()] for t in trees]
    out = metrics.summarize(chosen, [t.nodes[t.greedy_leaf()].score for t in trees],
                            [max(lv) for lv in leaves], [np.mean(lv) for lv in leaves],
                            num_bootstrap=num_bootstrap, seed=seed)
    out.update(calls=calls, parse_failures=fails, **truncation(judge))
    return out


def simulated_judges(config) -> dict[str, judges.Judge]:
    """One `SimulatedJudge` per `simulated.accuracies` entry, named "sim-acc<a>"."""
    s = config.simulated
    return {f"sim-acc{a:g}": judges.SimulatedJudge(judges.SimulatedSpec(
        accuracy=a, position_bias=s.position_bias, length_bias=s.length_bias,
        tie_rate=s.tie_rate, malformed_rate=s.malformed_rate), name=f"sim-acc{a:g}",
        seed=config.seed + k) for k, a in enumerate(s.accuracies)}


def _methods(judge, requested) -> list[str]:
    """Score judges (oracle, ORM, PRM) rank by their score: one 'likert' (= score) entry."""
    return ["likert"] if isinstance(judge, judges.ScoreJudge) else list(requested)


def rerank_all(judge_set: dict, pools, config) -> dict:
    out = {}
    for name, j in judge_set.items():
        for method in _methods(j, config.protocols.rerank_methods):
            key = f"{name}/{'score' if isinstance(j, judges.ScoreJudge) else method}"
            out[key] = eval_rerank(j, pools, method, config.seed, config.eval.num_bootstrap)
            logging.info("jetts rerank %s: top1 %.1f (greedy %.1f, oracle %.1f)", key,
                         out[key]["top1"], out[key]["greedy"], out[key]["oracle"])
    return out


def beam_all(judge_set: dict, trees, config) -> dict:
    """Beam search with every judge x method, without and (if configured) with look-ahead."""
    beam = {}
    for name, j in judge_set.items():
        for method in _methods(j, config.protocols.beam_methods):
            for look in (False, True) if config.protocols.lookahead else (False,):
                key = (f"{name}/{'score' if isinstance(j, judges.ScoreJudge) else method}"
                       f"{'+lookahead' if look else ''}")
                beam[key] = eval_beam(j, trees, method, look, config.seed,
                                      config.eval.num_bootstrap)
                logging.info("jetts beam %s: top1 %.1f", key, beam[key]["top1"])
    return beam


def position_study(judge: judges.Judge, pools: list[pools_lib.Pool], seed: int,
                   num_bootstrap: int) -> dict:
    """Slope of the round-robin total against the position a response is shown at (pools
    shuffled, so quality is independent of position), with one order and both orders.
    A judge choosing "A" with probability p gives slope -p with one order, 0 with both."""
    rng = np.random.default_rng(seed)
    out = {}
    for both in (False, True):
        judge.reset_stats()
        slopes, reps = [], []
        for pool in pools:
            resp = [pool.responses[i] for i in rng.permutation(len(pool.responses))]
            r = protocols.rerank_round_robin(judge, pool.query, resp, rng, both_orders=both)
            x = np.arange(len(resp)) - (len(resp) - 1) / 2
            slopes.append(float((x * r.totals).sum() / (x * x).sum()))
            reps.append(metrics.pairwise_bias(r.verdicts))
        slopes = np.asarray(slopes)
        boot = slopes[np.random.default_rng(seed).integers(0, len(slopes),
                                                           (num_bootstrap, len(slopes)))].mean(1)
        out["both_orders" if both else "one_order"] = {
            "slope": float(slopes.mean()),
            "slope_ci": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
            "first_win_rate": metrics.merge_bias(reps)["first_win_rate"]}
    return out


def _refine_one(mode: str, judge, refiner, pl: pools_lib.Pool, rng, config, fmt: str,
                max_tokens: int) -> protocols.RefineResult:
    g = pl.responses[pl.greedy_index]
    it = config.protocols.refine_iterations
    if mode == "single":
        return protocols.refine_single(judge, refiner, pl.query, g, ar.score, rng,
                                       max_iterations=it, fmt=fmt, max_tokens=max_tokens)
    other = next(x for i, x in enumerate(pl.responses) if i != pl.greedy_index)
    return protocols.refine_pairwise(judge, refiner, pl.query, g, other, ar.score, rng,
                                     max_iterations=it, fmt=fmt, max_tokens=max_tokens)


def eval_refinement(judge, refiner, pools, config, fmt: str) -> dict:
    """Critique-based refinement of each pool's greedy response (single and pairwise, on
    arithmetic), and Likert reranking of the same pools for comparison. A local refiner's
    replies are capped at REFINE_MAX_TOKENS and at the room its context leaves."""
    seed, nb = config.seed, config.eval.num_bootstrap
    if isinstance(refiner, LocalLM):
        refiner = ContextFitted(refiner)
    max_tokens = REFINE_MAX_TOKENS if isinstance(refiner, LocalLM) else config.pools.max_tokens
    rng = np.random.default_rng(seed)
    greedy = [pl.scores[pl.greedy_index] for pl in pools]
    oracle = [max(pl.scores) for pl in pools]
    rand = [float(np.mean(pl.scores)) for pl in pools]
    out = {}
    for mode in ("single", "pairwise"):
        judge.reset_stats()
        chosen, stops, iters, rfails, jfails = [], {}, [], 0, 0
        for pl in pools:
            res = _refine_one(mode, judge, refiner, pl, rng, config, fmt, max_tokens)
            chosen.append(res.score)
            stops[res.stop_reason] = stops.get(res.stop_reason, 0) + 1
            iters.append(res.iterations)
            rfails += res.refiner_parse_failures
            jfails += res.judge_parse_failures
        s = metrics.summarize(chosen, greedy, oracle, rand, num_bootstrap=nb, seed=seed)
        s.update(stop_reasons=stops, mean_iterations=float(np.mean(iters)),
                 refiner_parse_failures=rfails, judge_parse_failures=jfails, **truncation(judge))
        out[mode] = s
    out["rerank_same_queries"] = eval_rerank(judge, pools, "likert", seed, nb)
    return out


def pool_info(pools) -> dict:
    """Size and greedy / best / random (mean) score of a domain's pools."""
    return {"queries": len(pools), "mean_pool": float(np.mean([len(p.responses) for p in pools])),
            "greedy": float(np.mean([p.scores[p.greedy_index] for p in pools])),
            "oracle": float(np.mean([max(p.scores) for p in pools])),
            "random": float(np.mean([np.mean(p.scores) for p in pools]))}


def tree_info(trees) -> dict:
    """Count, depth, leaves and greedy / best / mean leaf score of a domain's step trees."""
    return {"trees": len(trees), "mean_depth": float(np.mean([t.depth for t in trees])),
            "mean_leaves": float(np.mean([len(t.leaves()) for t in trees])),
            "greedy_leaf": float(np.mean([t.nodes[t.greedy_leaf()].score for t in trees])),
            "best_leaf": float(np.mean([t.best_leaf_score() for t in trees])),
            "mean_leaf": float(np.mean([np.mean([t.nodes[i].score for i in t.leaves()])
                                        for t in trees]))}
