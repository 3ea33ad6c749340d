"""The arithmetic domain's run pieces: queries per role, the local models and their data.

    gen_lm, info = train_generator(config, workdir, mesh)   # solve + refine SFT (finetune)
    judge_lm, info = train_judge_lm(config, workdir, mesh, gen_lm)
    rm, info = train_reward_model("prm", config, gen_lm, rm_rows(config, gen_lm), workdir, mesh)

Each role draws its queries from its own seeded stream ([seed, 1] train, [seed, 3] test
then tree, [seed, 4] judge, [seed, 6] RM); training and test sums are disjoint
(`arithmetic.queries(held_out=...)`). Every model trains in its own workdir through
lib/common/train_loop (checkpointed, resumable); the info dicts are what results.json
stores under "training".
"""
from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

from lib.common import train_loop
from lib.jetts import generators, local_training, reward_models, training
from lib.jetts import pools as pools_lib
from lib.jetts.domains import arithmetic as ar
from lib.lm import finetune
from lib.lm.local import LocalLM
from lib.lm.tokenizer import Tokenizer

INSTRUCTION = ("Add the two numbers column by column from the right. Write each column "
               "as x+y+carry=CS (carry and sum digit), separated by single spaces, then "
               "= and the answer with one more digit than the operands.\n")
INFO_KEYS = ("steps", "resumed_from", "wall_s", "examples", "tokens_per_example")


def _train_queries(config, stream: int, n: int, prefix: str) -> list[pools_lib.Query]:
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


def train_lm(block, conversations, workdir: str, mesh, seed: int,
             init_params=None) -> tuple[LocalLM, dict]:
    """SFT (`finetune.finetune`) of a byte-tokenizer LM of `block.model` on chat
    conversations in `workdir`: a fresh one, or one starting from `init_params`."""
    tok = Tokenizer()
    lm, info = finetune.finetune(
        finetune.lm_config(block.model, tok.vocab_size), tok, conversations, workdir, mesh,
        batch_size=block.batch_size, seed=seed,
        loop=train_loop.LoopConfig.from_config(block.train),
        optim=finetune.optimizer_settings(block.optim, block.train.num_steps),
        base_params=init_params)
    return lm, {k: info[k] for k in INFO_KEYS}


def train_generator(config, workdir: str, mesh) -> tuple[LocalLM, dict]:
    """The local generator: solving plus the compact refinement prompts."""
    g = config.generator
    convs = local_training.generator_conversations(
        _train_queries(config, 1, g.num_train, "train"),
        np.random.default_rng([config.seed, 2]), g.refine_fraction)
    return train_lm(g, convs, workdir, mesh, config.seed)


def train_judge_lm(config, workdir: str, mesh, gen_lm: LocalLM) -> tuple[LocalLM, dict]:
    """The local judge LM on the compact judge prompts, from the generator's weights when
    `judge_lm.init_from_generator`."""
    jb = config.judge_lm
    convs = local_training.judge_conversations(_train_queries(config, 4, jb.num_train, "judge"),
                                               np.random.default_rng([config.seed, 5]))
    return train_lm(jb, convs, workdir, mesh, config.seed + 1,
                    init_params=gen_lm.params if jb.init_from_generator else None)


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
    rm_q = _train_queries(config, 6, r.num_train_queries, "rm")
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


def train_reward_model(kind: str, config, gen: LocalLM, rows: list[dict], workdir: str,
                       mesh) -> tuple[reward_models.RewardModelJudge, dict]:
    """The ORM ("orm": answer correct) or PRM ("prm": exact step labels), fine-tuned from
    the generator with a scalar head on `rows`."""
    r = config.reward
    qs = [pools_lib.Query(**d["query"]) for d in rows]
    texts = [d["text"] for d in rows]
    labels = [[ar.score(q, t)] if kind == "orm" else ar.step_labels(q, t)
              for q, t in zip(qs, texts)]
    data = reward_models.encode_examples(gen.tok, qs, texts, labels, kind=kind, sep=ar.SEP,
                                         max_len=gen.cfg.max_len)
    task = training.make_task(gen.cfg, gen.params, data, batch_size=r.batch_size,
                              seed=config.seed, logprob_feature=r.logprob_feature,
                              **finetune.optimizer_settings(r.optim, r.train.num_steps))
    t0 = time.perf_counter()
    res = train_loop.train(task, train_loop.LoopConfig.from_config(r.train), workdir=workdir,
                           mesh=mesh)                       # guards.Preempted on SIGTERM
    rm = reward_models.RewardModelJudge(kind.upper(), gen.cfg, jax.device_get(res.state["params"]),
                                        gen.tok, kind=kind, sep=ar.SEP, aggregation=r.aggregation)
    return rm, {"steps": res.step, "resumed_from": res.resumed_from,
                "wall_s": time.perf_counter() - t0,
                "examples": int(len(data["tokens"])),
                "positive_label_rate": float((data["label"] * data["mask"]).sum() / data["mask"].sum())}
