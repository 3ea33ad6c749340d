"""The arithmetic domain's local models, each trained in its own workdir (checkpointed,
resumable; `guards.Preempted` on SIGTERM):

    gen_lm, info = train_generator(config, workdir, mesh)   # solve + refine SFT (finetune)
    judge_lm, info = train_judge_lm(config, workdir, mesh, gen_lm)
    rm, info = train_reward_model("prm", config, gen_lm, setup.rm_rows(config, gen_lm),
                                  workdir, mesh)

Their queries and rows come from `arithmetic_setup.py`; the info dicts are what results.json
stores under "training".
"""
from __future__ import annotations

import time

import jax
import numpy as np

from lib.common import train_loop
from lib.jetts import arithmetic_setup as setup, local_training, reward_models, training
from lib.jetts import pools as pools_lib
from lib.jetts.domains import arithmetic as ar
from lib.lm import finetune
from lib.lm.local import LocalLM
from lib.lm.tokenizer import Tokenizer

INFO_KEYS = ("steps", "resumed_from", "wall_s", "examples", "tokens_per_example")


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
        setup.train_queries(config, 1, g.num_train, "train"),
        np.random.default_rng([config.seed, 2]), g.refine_fraction)
    return train_lm(g, convs, workdir, mesh, config.seed)


def train_judge_lm(config, workdir: str, mesh, gen_lm: LocalLM) -> tuple[LocalLM, dict]:
    """The local judge LM on the compact judge prompts, from the generator's weights when
    `judge_lm.init_from_generator`."""
    jb = config.judge_lm
    convs = local_training.judge_conversations(
        setup.train_queries(config, 4, jb.num_train, "judge"),
        np.random.default_rng([config.seed, 5]))
    return train_lm(jb, convs, workdir, mesh, config.seed + 1,
                    init_params=gen_lm.params if jb.init_from_generator else None)


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
