"""JETTS in small: judges vs reward models in reranking, beam search and refinement.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    validate -> [arithmetic]
        generator LM: trained here on solving + refining (lib/lm SFT, train_loop; resumes)
                      or a served model (pools, trees and refinements come from it)
        pools (1 greedy + N-1 sampled) and full step trees (N, M, d) -> workdir/data/*.jsonl
        judge LM (compact Prometheus format) trained here, or a served judge
        ORM and PRM: the local LM + a scalar head, fine-tuned on the generator's samples
        judges = oracle, simulated (each accuracy), prompted judge, ORM, PRM
        reranking (every method) / beam search (with and without look-ahead) / refinement
    -> [humaneval]: reranking of mutant pools and beam search over mutant step trees
       [instructions]: reranking of edited pools (simulated and oracle judges)
    -> position-bias study, targets, results.json, results.md, plots/*.png

Every stage's output is stored in the workdir (checkpoints, pools, trees, RM training
data), so a rerun resumes training and reuses the generated data.
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import numpy as np
from absl import logging

from lib.common import extras
from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import guards
from lib.common import report as common_report
from lib.common import train_loop
from lib.common import workdir as wd
from lib.jetts import config_schema, generators, judges, local_training, metrics, protocols
from lib.jetts import pools as pools_lib
from lib.jetts import reward_models
from lib.jetts.domains import arithmetic as ar
from lib.jetts.domains import humaneval as he_dom
from lib.jetts.domains import instructions as if_dom
from lib.lm import sft
from lib.lm.client import OpenAIClient
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig
from lib.lm.tokenizer import Tokenizer
from lib.jetts.config_schema import optional_modules

validate = config_schema.validate
ARITH_INSTRUCTION = ("Add the two numbers column by column from the right. Write each column "
                     "as x+y+carry=CS (carry and sum digit), separated by single spaces, then "
                     "= and the answer with one more digit than the operands.\n")


# ----------------------------------------------------------------------------- models


def _optim(block) -> dict:
    o = block.optim
    return dict(lr=o.lr, num_steps=block.train.num_steps, warmup_steps=o.warmup_steps,
                weight_decay=o.weight_decay, grad_clip=o.grad_clip)


def train_local_lm(block, conversations, workdir: str, mesh, seed: int,
                   init_params=None) -> tuple[LocalLM, dict]:
    """SFT of a workspace LM (byte tokenizer) on chat conversations, in `workdir`: a fresh
    one, or one starting from `init_params` (same architecture)."""
    os.makedirs(workdir, exist_ok=True)
    tok = Tokenizer()
    m = block.model
    cfg = LMConfig(vocab_size=tok.vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                   num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len, dtype=m.dtype)
    examples = [sft.encode_conversation(tok, c, cfg.max_len) for c in conversations]
    data = sft.pad_examples(examples, max(len(i) for i, _ in examples), tok.pad_id)
    if mesh_lib.is_primary():
        sft.save_run_spec(workdir, cfg, tok, _optim(block))
    task = sft.make_task(cfg, data, batch_size=block.batch_size, seed=seed,
                         base_params=init_params, **_optim(block))
    t0 = time.perf_counter()
    res = train_loop.train(task, train_loop.LoopConfig.from_config(block.train),
                           workdir=workdir, mesh=mesh)      # guards.Preempted on SIGTERM
    info = {"steps": res.step, "resumed_from": res.resumed_from,
            "wall_s": time.perf_counter() - t0, "examples": len(examples),
            "tokens_per_example": int(data["tokens"].shape[1])}
    return LocalLM(cfg, jax.device_get(res.state["params"]), tok), info


def served_lm(block) -> OpenAIClient:
    s = block.served
    return OpenAIClient(s.base_url, s.model,
                        api_key=os.environ.get(s.api_key_env) if s.api_key_env else None,
                        cache_dir=s.cache_dir or None)


def train_reward_model(kind: str, config, gen: LocalLM, train_data: list[dict], workdir: str,
                       mesh) -> tuple[reward_models.RewardModelJudge, dict]:
    r = config.reward
    qs = [pools_lib.Query(**d["query"]) for d in train_data]
    texts = [d["text"] for d in train_data]
    labels = [[ar.score(q, t)] if kind == "orm" else ar.step_labels(q, t)
              for q, t in zip(qs, texts)]
    data = reward_models.encode_examples(gen.tok, qs, texts, labels, kind=kind, sep=ar.SEP,
                                         max_len=gen.cfg.max_len)
    os.makedirs(workdir, exist_ok=True)
    task = reward_models.make_task(gen.cfg, gen.params, data, batch_size=r.batch_size,
                                   seed=config.seed, logprob_feature=r.logprob_feature,
                                   **_optim(r))
    t0 = time.perf_counter()
    res = train_loop.train(task, train_loop.LoopConfig.from_config(r.train), workdir=workdir,
                           mesh=mesh)                       # guards.Preempted on SIGTERM
    rm = reward_models.RewardModelJudge(kind.upper(), gen.cfg, jax.device_get(res.state["params"]),
                                        gen.tok, kind=kind, sep=ar.SEP, aggregation=r.aggregation)
    return rm, {"steps": res.step, "resumed_from": res.resumed_from,
                "wall_s": time.perf_counter() - t0,
                "examples": int(len(data["tokens"])),
                "positive_label_rate": float((data["label"] * data["mask"]).sum() / data["mask"].sum())}


# ----------------------------------------------------------------------------- evaluation


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
            for a, b, s in r.verdicts:
                if sc[a] != sc[b] and s != 0.5:
                    t += 1
                    g += float((s == 0.0) == (sc[a] > sc[b]))
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
               **_truncation(judge))
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
    out.update(calls=calls, parse_failures=fails, **_truncation(judge))
    return out


def _truncation(judge: judges.Judge) -> dict:
    """The judge's replies cut at max_tokens since its last `reset_stats`."""
    cut, _, rate = judges.truncation_rate(judge.stats)
    return {"truncated": cut, "truncation_rate": rate}


def judge_preflight(judge: judges.Judge, pools: list[pools_lib.Pool],
                    trees: list[pools_lib.Tree], max_rate: float, num: int = 2) -> dict:
    """Before the protocols: ask `judge` every kind of prompt they will send (Likert and
    additive ratings, both pairwise orders; full responses of `num` pools and partial
    prefixes and look-ahead rollouts of `num` trees) and measure how many replies stop at
    max_tokens. ValueError when the rate exceeds `max_rate` (a cut reply loses its verdict,
    which comes last, and would become a random fallback)."""
    judge.reset_stats()
    for pl in pools[:num]:
        r = pl.responses[:4]
        for rubric in judges.RUBRICS:
            judge.rate(pl.query, r, rubric=rubric)
        judge.compare(pl.query, [(a, b) for a in r for b in r if a is not b])
    for t in trees[:num]:
        for d in range(1, t.depth + 1):
            nodes = [nd for nd in t.nodes if nd.depth == d][:3]
            resp = [pools_lib.Response(nd.text, nd.score) for nd in nodes]
            roll = [pools_lib.Response(nd.rollout, nd.rollout_score) for nd in nodes]
            for rubric in judges.RUBRICS:
                judge.rate(t.query, resp, rubric=rubric, partial=True)
            judge.compare(t.query, [(a, b) for a in resp for b in resp if a is not b], partial=True)
            judge.compare(t.query, [(a, b) for a in roll for b in roll if a is not b])
    cut, calls, rate = judges.truncation_rate(judge.stats)
    fails = sum(judge.stats[k]["parse_failures"] for k in judges.KINDS)
    judge.reset_stats()
    out = {"calls": calls, "truncated": cut, "truncation_rate": rate, "parse_failures": fails}
    logging.info("jetts judge preflight %s: %s", judge.name, out)
    if rate > max_rate:
        raise ValueError(
            f"judge {judge.name!r}: {cut} of {calls} preflight replies stopped at max_tokens = "
            f"{getattr(judge, 'max_tokens', '?')} (rate {rate:.3f} > eval.max_truncation_rate = "
            f"{max_rate}); their verdicts would be lost. Raise --config.judge_lm.max_tokens")
    return out


def truncation_warnings(results: dict, max_rate: float) -> list[str]:
    """One line per protocol row whose judge replies were cut at max_tokens more often than
    `max_rate` (those rows' parse failures are mostly truncations, not judge errors)."""
    out = []
    for dom, d in results["domains"].items():
        for proto in ("rerank", "beam"):
            for k, v in d.get(proto, {}).items():
                if v.get("truncation_rate", 0.0) > max_rate:
                    out.append(f"{dom} {proto} {k}: {v['truncated']} of {v['calls']} judge replies "
                               f"cut at max_tokens (rate {v['truncation_rate']:.3f} > {max_rate})")
        for k, v in d.get("refine", {}).items():
            if v.get("truncation_rate", 0.0) > max_rate:
                out.append(f"{dom} refine {k}: {v['truncated']} judge replies cut at max_tokens "
                           f"(rate {v['truncation_rate']:.3f} > {max_rate})")
    for line in out:
        logging.warning("jetts: %s", line)
    return out


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


def _cached(path: str, make, save, load):
    if os.path.exists(path):
        return load(path), True
    items = make()
    if mesh_lib.is_primary():
        save(path, items)
    return items, False


def _simulated(config) -> dict[str, judges.Judge]:
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


def tree_info(trees) -> dict:
    return {"trees": len(trees), "mean_depth": float(np.mean([t.depth for t in trees])),
            "mean_leaves": float(np.mean([len(t.leaves()) for t in trees])),
            "greedy_leaf": float(np.mean([t.nodes[t.greedy_leaf()].score for t in trees])),
            "best_leaf": float(np.mean([t.best_leaf_score() for t in trees])),
            "mean_leaf": float(np.mean([np.mean([t.nodes[i].score for i in t.leaves()])
                                        for t in trees]))}


# ----------------------------------------------------------------------------- domains


def run_arithmetic(config, workdir: str, mesh, training: dict) -> dict:
    a, seed = config.arithmetic, config.seed
    data_dir = os.path.join(workdir, "data")
    train_q = ar.queries(np.random.default_rng([seed, 1]), config.generator.num_train, a.digits,
                         held_out=False, test_fraction=a.test_fraction, prefix="train")
    gen_convs = local_training.generator_conversations(
        train_q, np.random.default_rng([seed, 2]), config.generator.refine_fraction)
    gen_lm, training["generator"] = train_local_lm(
        config.generator, gen_convs, os.path.join(workdir, "generator"), mesh, seed)
    if config.generator.source == "local":
        generator, sampler = gen_lm, generators.LocalSampler(gen_lm)
    else:
        generator = served_lm(config.generator)
        sampler = generators.ClientSampler(generator)

    def with_instruction(qs):
        if not a.instruction:
            return qs
        return [dataclasses.replace(q, prompt=ARITH_INSTRUCTION + q.prompt) for q in qs]

    test_rng = np.random.default_rng([seed, 3])
    test_q = with_instruction(ar.queries(test_rng, a.num_queries, a.digits, held_out=True,
                                         test_fraction=a.test_fraction, prefix="test"))
    tree_q = with_instruction(ar.queries(test_rng, a.num_tree_queries, a.digits, held_out=True,
                                         test_fraction=a.test_fraction, prefix="tree"))
    p = config.pools
    t0 = time.perf_counter()
    pools, pools_cached = _cached(
        os.path.join(data_dir, "arithmetic_pools.jsonl"),
        lambda: generators.make_pools(sampler, test_q, ar.score, num_sampled=p.num_sampled,
                                      temperature=p.temperature, top_p=p.top_p,
                                      max_tokens=p.max_tokens, seed=seed),
        pools_lib.save_pools, pools_lib.load_pools)
    trees, trees_cached = _cached(
        os.path.join(data_dir, "arithmetic_trees.jsonl"),
        lambda: generators.make_trees(sampler, tree_q, ar.score, n=config.tree.n, m=config.tree.m,
                                      depth=a.digits + 1, sep=ar.SEP,
                                      is_final=lambda s: s.startswith("="),
                                      step_max_tokens=config.tree.step_max_tokens,
                                      temperature=p.temperature, top_p=p.top_p, seed=seed),
        pools_lib.save_trees, pools_lib.load_trees)
    gen_info = {"pools_wall_s": time.perf_counter() - t0, "reused": pools_cached and trees_cached,
                "greedy_accuracy": float(np.mean([pl.scores[pl.greedy_index] for pl in pools])),
                "sample_accuracy": float(np.mean([np.mean(pl.scores[1:]) for pl in pools]))
                if p.num_sampled else None,
                "pool_oracle": float(np.mean([max(pl.scores) for pl in pools])),
                "tree_leaves": int(np.mean([len(t.leaves()) for t in trees])),
                "tree_greedy": float(np.mean([t.nodes[t.greedy_leaf()].score for t in trees])),
                "tree_oracle": float(np.mean([t.best_leaf_score() for t in trees]))}

    # judges
    judge_set: dict[str, judges.Judge] = {"oracle": judges.OracleJudge()}
    judge_set.update(_simulated(config))
    jb = config.judge_lm
    if jb.source == "local":
        judge_q = ar.queries(np.random.default_rng([seed, 4]), jb.num_train, a.digits,
                             held_out=False, test_fraction=a.test_fraction, prefix="judge")
        jconv = local_training.judge_conversations(judge_q, np.random.default_rng([seed, 5]))
        judge_lm, training["judge_lm"] = train_local_lm(
            jb, jconv, os.path.join(workdir, "judge_lm"), mesh, seed + 1,
            init_params=gen_lm.params if jb.init_from_generator else None)
    else:
        judge_lm = served_lm(jb)
    prompted = judges.PromptedJudge(judge_lm, jb.fmt, name=f"judge-lm:{jb.fmt}",
                                    max_tokens=jb.max_tokens, seed=seed)
    judge_set[prompted.name] = prompted
    out = {"generator": gen_info, "judge_preflight": judge_preflight(
        prompted, pools, trees, config.eval.max_truncation_rate)}
    r = config.reward
    if r.kinds:
        rm_q = ar.queries(np.random.default_rng([seed, 6]), r.num_train_queries, a.digits,
                          held_out=False, test_fraction=a.test_fraction, prefix="rm")

        def make_rm_data():
            outs = generators.LocalSampler(gen_lm).sample(
                rm_q, [""] * len(rm_q), n=r.samples_per_query, temperature=p.temperature,
                top_p=1.0, max_tokens=p.max_tokens, stop_at=None, seed=seed + 7)
            rows = [{"query": dataclasses.asdict(q), "text": t} for q, row in zip(rm_q, outs)
                    for t, _ in row]
            if r.synthetic:     # balance the generator's mostly wrong samples
                srng = np.random.default_rng([seed, 8])
                for q in rm_q:
                    rows.append({"query": dataclasses.asdict(q),
                                 "text": ar.SEP.join(ar.reference_steps(q))})
                    rows.append({"query": dataclasses.asdict(q), "text": ar.corrupt(q, srng)[0]})
            return rows

        rm_data, _ = _cached(os.path.join(data_dir, "rm_train.jsonl"), make_rm_data,
                             pools_lib._write, pools_lib._read)
        for kind in r.kinds:
            rm, training[kind] = train_reward_model(kind, config, gen_lm, rm_data,
                                                    os.path.join(workdir, kind), mesh)
            judge_set[rm.name] = rm

    out["rerank"] = rerank_all(judge_set, pools, config)
    out["beam"] = beam_all(judge_set, trees, config)
    if config.protocols.refine_queries:
        out["refine"] = run_refinement(prompted, generator, pools[:config.protocols.refine_queries],
                                       config, "compact" if config.generator.source == "local"
                                       else "full")
    first_sim = next(iter(_simulated(config).values()))
    out["position_study"] = position_study(first_sim, pools, seed, config.eval.num_bootstrap)
    return out


class ContextFitted(LocalLM):
    """A `LocalLM` whose `chat` cuts `max_tokens` to the room its context leaves after the
    prompt (a served model's server does the same with its context length); ValueError when
    no room is left."""

    def __init__(self, lm: LocalLM):
        super().__init__(lm.cfg, lm.params, lm.tok, name=lm.name)

    def chat(self, messages, *, max_tokens: int = 256, **kw):
        from lib.lm import chat as chat_lib
        used = self.count_tokens(chat_lib.render_chat(messages))
        room = self.cfg.max_len - used
        if room < 1:
            raise ValueError(f"a {used}-token prompt leaves no room in the context of "
                             f"{self.cfg.max_len} tokens")
        return super().chat(messages, max_tokens=min(max_tokens, room), **kw)


REFINE_MAX_TOKENS = 96      # a revised 3-digit working in <revised_response> tags is ~75


def run_refinement(judge, refiner, pools, config, fmt: str) -> dict:
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
            g = pl.responses[pl.greedy_index]
            if mode == "single":
                res = protocols.refine_single(judge, refiner, pl.query, g, ar.score, rng,
                                              max_iterations=config.protocols.refine_iterations,
                                              fmt=fmt, max_tokens=max_tokens)
            else:
                other = next(x for i, x in enumerate(pl.responses) if i != pl.greedy_index)
                res = protocols.refine_pairwise(judge, refiner, pl.query, g, other, ar.score, rng,
                                                max_iterations=config.protocols.refine_iterations,
                                                fmt=fmt, max_tokens=max_tokens)
            chosen.append(res.score)
            stops[res.stop_reason] = stops.get(res.stop_reason, 0) + 1
            iters.append(res.iterations)
            rfails += res.refiner_parse_failures
            jfails += res.judge_parse_failures
        s = metrics.summarize(chosen, greedy, oracle, rand, num_bootstrap=nb, seed=seed)
        s.update(stop_reasons=stops, mean_iterations=float(np.mean(iters)),
                 refiner_parse_failures=rfails, judge_parse_failures=jfails, **_truncation(judge))
        out[mode] = s
    method = "likert"
    out["rerank_same_queries"] = eval_rerank(judge, pools, method, seed, nb)
    return out


def run_pool_domain(name: str, pools, config, judge_set) -> dict:
    return {"pools": {"queries": len(pools), "mean_pool": float(np.mean([len(p.responses) for p in pools])),
                      "greedy": float(np.mean([p.scores[p.greedy_index] for p in pools])),
                      "oracle": float(np.mean([max(p.scores) for p in pools])),
                      "random": float(np.mean([np.mean(p.scores) for p in pools]))},
            "rerank": rerank_all(judge_set, pools, config)}


# ----------------------------------------------------------------------------- targets


def rerank_vs_greedy(rows: dict) -> dict:
    """Every judge/method's reranking against greedy, with CIs: pairwise accuracy on pairs
    of different correctness (query bootstrap) and top-1 minus greedy (paired bootstrap).
    `chance`: "above" / "at" / "below" by whether the accuracy CI lies above 0.5, contains
    it, or lies below; `vs_greedy`: "better" / "tie" / "worse" by the difference's CI."""
    out = {}
    for k, v in rows.items():
        if k.startswith("oracle"):
            continue
        lo, hi = v.get("judge_accuracy_ci", [float("nan")] * 2)
        dlo, dhi = v["minus_greedy_ci"]
        out[k] = {"judge_accuracy": v["judge_accuracy"], "judge_accuracy_ci": [lo, hi],
                  "minus_greedy": v["top1"] - v["greedy"], "minus_greedy_ci": [dlo, dhi],
                  "chance": "above" if lo > 0.5 else "below" if hi < 0.5 else "at",
                  "vs_greedy": "better" if dlo > 0 else "worse" if dhi < 0 else "tie"}
    return out


def targets(results: dict) -> dict:
    out = {}
    arith = results["domains"].get("arithmetic")
    if arith:
        beam = arith["beam"]
        if "PRM/score" in beam:
            prm = beam["PRM/score"]["top1"]
            rivals = {k: v["top1"] for k, v in beam.items()
                      if k.startswith(("ORM/", "judge-lm")) and "lookahead" not in k}
            out["prm_beats_orm_and_judges_in_beam"] = {
                "prm": prm, "rivals": rivals,
                "met": bool(rivals) and all(prm > v for v in rivals.values())}
        better = {k: {"top1": v["top1"], "greedy": v["greedy"], "judge_accuracy": v["judge_accuracy"]}
                  for k, v in arith["rerank"].items()
                  if not k.startswith("oracle") and v["judge_accuracy"] > 0.5}
        out["better_than_chance_rerank_beats_greedy"] = {
            "judges": better, "met": bool(better) and all(v["top1"] > v["greedy"]
                                                          for v in better.values()),
            "analysis": rerank_vs_greedy(arith["rerank"])}
        ps = arith["position_study"]
        lo, hi = ps["both_orders"]["slope_ci"]
        lo1, hi1 = ps["one_order"]["slope_ci"]
        out["position_bias_cancelled"] = {
            "one_order_slope": ps["one_order"]["slope"], "both_orders_slope": ps["both_orders"]["slope"],
            "met": bool(lo <= 0 <= hi and hi1 < 0)}
    return out


# ----------------------------------------------------------------------------- main


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    extras.require(optional_modules(config))   # before any compute
    t_start = time.perf_counter()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary())
    results = {"tag": config.tag, "training": {}, "domains": {}}
    if "arithmetic" in config.domains:
        mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
        results["domains"]["arithmetic"] = run_arithmetic(config, workdir, mesh,
                                                          results["training"])
    data_dir = os.path.join(workdir, "data")
    sim = {"oracle": judges.OracleJudge(), **_simulated(config)}
    if "humaneval" in config.domains:
        guards.check_preempted("the humaneval domain")
        h = config.humaneval
        pools, _ = _cached(os.path.join(data_dir, "humaneval_pools.jsonl"),
                           lambda: he_dom.make_pools(h.num_problems, h.pool_size, config.seed),
                           pools_lib.save_pools, pools_lib.load_pools)
        results["domains"]["humaneval"] = run_pool_domain("humaneval", pools, config, sim)
        if h.tree_problems:
            trees, _ = _cached(os.path.join(data_dir, "humaneval_trees.jsonl"),
                               lambda: he_dom.make_trees(h.tree_problems, config.tree.n,
                                                         config.tree.m, h.tree_depth,
                                                         h.tree_keep, config.seed),
                               pools_lib.save_trees, pools_lib.load_trees)
            results["domains"]["humaneval"]["trees"] = tree_info(trees)
            results["domains"]["humaneval"]["beam"] = beam_all(sim, trees, config)
    if "instructions" in config.domains:
        guards.check_preempted("the instructions domain")
        i = config.instructions
        pools = if_dom.make_pools(i.num_queries, i.pool_size, config.seed)
        results["domains"]["instructions"] = run_pool_domain("instructions", pools, config, sim)
    results["targets"] = targets(results)
    results["warnings"] = truncation_warnings(results, config.eval.max_truncation_rate)
    results["wall_s"] = time.perf_counter() - t_start
    results["machine"] = common_report.machine()
    guards.check_preempted("writing results.json")
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        from lib.jetts import report
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.results_markdown(results) + "\n")
        if config.eval.plots:
            report.plots(results, os.path.join(workdir, wd.PLOTS))
    return results
