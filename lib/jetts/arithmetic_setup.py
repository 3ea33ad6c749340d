"""The arithmetic domain's data: queries per role, pools and trees, reward-model rows.

Each role draws its queries from its own seeded stream ([seed, 1] train, [seed, 3] test
then tree, [seed, 4] judge, [seed, 6] RM); training and test sums are disjoint
(`arithmetic.queries(held_out=...)`). The local models train on them in `runs.py`.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from lib.jetts import generators
from lib.jetts import pools as pools_lib
from lib.jetts.domains import arithmetic as ar
from lib.lm.local import LocalLM

INSTRUCTION = ("Add the two numbers column by column from the right. Write each column "
               "as x+y+carry=CS (carry and sum digit), separated by single spaces, then "
               "= and the answer with one more digit than the operands.\n")


def train_queries(config, stream: int, n: int, prefix: str) -> list[pools_lib.Query]:
    """`n` training sums (never a held-out one) from the seeded stream [seed, stream]."""
    a = config.arithmetic
    return ar.queries(np.random.default_rng([config.seed, stream]), n, a.digits,
                      held_out=False, test_fraction=a.test_fraction, prefix=prefix)


def eval_queries(config) -> tuple[list[pools_lib.Query], list[pools_lib.Query]]:
    """(pool queries, tree queries): held-out sums, with the written instruction in front
    of each prompt when `arithmetic.instruction`."""
    a = config.arithmetic
    rng = np.random.default_rng([config.seed, 3])
    out = []
    for n, prefix in ((a.num_queries, "test"), (a.num_tree_queries, "tree")):
        qs = ar.queries(rng, n, a.digits, held_out=True, test_fraction=a.test_fraction,
                        prefix=prefix)
        if a.instruction:
            qs = [dataclasses.replace(q, prompt=INSTRUCTION + q.prompt) for q in qs]
        out.append(qs)
    return out[0], out[1]


def make_pools(config, sampler, queries) -> list[pools_lib.Pool]:
    p = config.pools
    return generators.make_pools(sampler, queries, ar.score, num_sampled=p.num_sampled,
                                 temperature=p.temperature, top_p=p.top_p,
                                 max_tokens=p.max_tokens, seed=config.seed)


def make_trees(config, sampler, queries) -> list[pools_lib.Tree]:
    p = config.pools
    return generators.make_trees(sampler, queries, ar.score, n=config.tree.n, m=config.tree.m,
                                 depth=config.arithmetic.digits + 1, sep=ar.SEP,
                                 is_final=lambda s: s.startswith("="),
                                 step_max_tokens=config.tree.step_max_tokens,
                                 temperature=p.temperature, top_p=p.top_p, seed=config.seed)


def generator_info(pools, trees, num_sampled: int, wall_s: float, reused: bool) -> dict:
    """What results.json says about the generator's pools and trees."""
    return {"pools_wall_s": wall_s, "reused": reused,
            "greedy_accuracy": float(np.mean([pl.scores[pl.greedy_index] for pl in pools])),
            "sample_accuracy": float(np.mean([np.mean(pl.scores[1:]) for pl in pools]))
            if num_sampled else None,
            "pool_oracle": float(np.mean([max(pl.scores) for pl in pools])),
            "tree_leaves": int(np.mean([len(t.leaves()) for t in trees])),
            "tree_greedy": float(np.mean([t.nodes[t.greedy_leaf()].score for t in trees])),
            "tree_oracle": float(np.mean([t.best_leaf_score() for t in trees]))}


def rm_rows(config, gen_lm: LocalLM) -> list[dict]:
    """Reward-model training rows {"query", "text"}: `reward.samples_per_query` generator
    samples per query, plus (`reward.synthetic`) the reference working and one corruption
    per query to balance the generator's mostly wrong samples."""
    r, p, seed = config.reward, config.pools, config.seed
    rm_q = train_queries(config, 6, r.num_train_queries, "rm")
    outs = generators.LocalSampler(gen_lm).sample(
        rm_q, [""] * len(rm_q), n=r.samples_per_query, temperature=p.temperature,
        top_p=1.0, max_tokens=p.max_tokens, stop_at=None, seed=seed + 7)
    rows = [{"query": dataclasses.asdict(q), "text": t} for q, row in zip(rm_q, outs)
            for t, _ in row]
    if r.synthetic:
        srng = np.random.default_rng([seed, 8])
        for q in rm_q:
            rows.append({"query": dataclasses.asdict(q), "text": ar.SEP.join(ar.reference_steps(q))})
            rows.append({"query": dataclasses.asdict(q), "text": ar.corrupt(q, srng)[0]})
    return rows
