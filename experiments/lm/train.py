"""The small LM of lib/lm on synthetic step-by-step addition: train, evaluate, report.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    config -> validate -> tokenizer (bytes, or BPE trained on the training conversations)
      -> num_train addition conversations (train side of the fixed split), padded, with the
         loss on the assistant turns only (lib/lm/sft.py)
      -> lib.common.train_loop (AdamW, cosine schedule, Orbax checkpoints, resume)
      -> greedy KV-cache decoding of eval.num_eval held-out problems -> exact match
      -> workdir: results.json, results.md, plots/loss.png, lm_model.json, tokenizer.json
"""
from __future__ import annotations

import dataclasses
import os
import time

import jax
import numpy as np
from absl import logging

from lib.common import config as config_lib
from lib.common import mesh as mesh_lib
from lib.common import metrics as metrics_lib
from lib.common import train_loop
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.lm import chat, config_schema, sampling, sft, tasks
from lib.lm.report import results_table, targets
from lib.lm.model import num_params
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.toolbox import plotting

validate = config_schema.validate


def build_tokenizer(config, conversations) -> Tokenizer:
    if config.tokenizer.bpe_merges == 0:
        return Tokenizer()
    texts = [chat.render_chat(c, add_generation_prompt=False)
             for c in conversations[:config.tokenizer.bpe_texts]]
    return train_bpe(texts, config.tokenizer.bpe_merges)


def optim_kwargs(config) -> dict:
    o = config.optim
    return dict(lr=o.lr, num_steps=config.train.num_steps, warmup_steps=o.warmup,
                weight_decay=o.weight_decay, grad_clip=o.clip)


def training_data(config) -> tuple[Tokenizer, dict]:
    t = config.task
    rng = np.random.default_rng([config.seed, tasks.TRAIN_STREAM])
    problems = tasks.sample_problems(rng, t.num_train, t.digits, held_out=False,
                                     test_fraction=t.test_fraction)
    convs = [tasks.conversation(p, t.digits, t.pad) for p in problems]
    tok = build_tokenizer(config, convs)
    examples = [sft.encode_conversation(tok, c, config.model.max_len) for c in convs]
    width = max(len(ids) for ids, _ in examples)
    return tok, sft.pad_examples(examples, width, tok.pad_id)


def evaluate(config, cfg, params, tok: Tokenizer) -> dict:
    """Greedy answers to eval.num_eval held-out problems; exact match and examples."""
    t = config.task
    rng = np.random.default_rng([config.seed, tasks.EVAL_STREAM])
    problems = tasks.sample_problems(rng, config.eval.num_eval, t.digits, held_out=True,
                                     test_fraction=t.test_fraction)
    stop = (tok.special_id("<|end|>"), tok.eos_id)
    answer_len = len(tok.encode(tasks.solution_text(problems[0], t.digits))) + 1
    correct, wrong = [], []
    t0 = time.perf_counter()
    new_tokens = 0
    for i in range(0, len(problems), config.eval.batch_size):
        chunk = problems[i:i + config.eval.batch_size]
        prompts = [tok.encode(chat.render_chat([{"role": "user", "content":
                                                 tasks.prompt_text(p, t.digits, t.pad)}]),
                              allow_special=True) for p in chunk]
        out = sampling.generate(cfg, params, prompts, key=jax.random.key(0), n=1,
                                max_tokens=answer_len + config.eval.extra_tokens,
                                temperature=0.0, stop_ids=stop)
        for p, samples in zip(chunk, out):
            reply = tok.decode(samples[0].tokens)
            new_tokens += len(samples[0].tokens)
            (correct if tasks.exact_match(p, reply) else wrong).append((p, reply))
    wall = time.perf_counter() - t0
    em = len(correct) / len(problems)
    return {"exact_match": em, "num_eval": len(problems), "num_correct": len(correct),
            "target_exact_match": config.eval.target_exact_match,
            "target_met": bool(em >= config.eval.target_exact_match),
            "eval_wall_s_incl_compile": wall, "eval_new_tokens": new_tokens,
            "wrong_examples": [{"problem": tasks.prompt_text(p, t.digits, t.pad), "reply": r,
                                "truth": p.a + p.b}
                               for p, r in wrong[:config.eval.wrong_examples]]}


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    t_start = time.perf_counter()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=mesh_lib.is_primary(),
               added=config_lib.added_of(config_schema.KEYS), renamed=config_schema.RENAMED_KEYS)
    tok, data = training_data(config)
    cfg = config_schema.model_config(config, tok.vocab_size)
    if mesh_lib.is_primary():
        sft.save_run_spec(workdir, cfg, tok, optim_kwargs(config))
    logging.info("lm: %d training conversations of <= %d tokens, vocab %d",
                 len(data["tokens"]), data["tokens"].shape[1], tok.vocab_size)
    task = sft.make_task(cfg, data, batch_size=config.train.batch_size, seed=config.seed,
                         **optim_kwargs(config))
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    t0 = time.perf_counter()
    result = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                              workdir=workdir, mesh=mesh)   # guards.Preempted on SIGTERM
    train_s = time.perf_counter() - t0
    params = jax.device_get(result.state["params"])
    results = {"step": result.step, "resumed_from": result.resumed_from,
               "train_wall_s": train_s, "num_params": num_params(params),
               "model": dataclasses.asdict(cfg),
               "train_tokens_per_example": int(data["tokens"].shape[1])}
    results["eval"] = evaluate(config, cfg, params, tok)
    results["targets"] = targets(results)
    logged = metrics_lib.read_metrics(workdir)
    if logged:
        results["final_loss"] = logged[-1].get("loss")
        results["final_token_accuracy"] = logged[-1].get("token_accuracy")
    if config.eval.plots and mesh_lib.is_primary() and logged:
        steps = [m["step"] for m in logged if "loss" in m]
        plotting.line_plot(os.path.join(workdir, wd.PLOTS, "loss.png"),
                           {"masked NLL (assistant tokens)": (steps, [m["loss"] for m in logged
                                                                       if "loss" in m])},
                           xlabel="step", ylabel="loss", logy=True,
                           title=f"{config.tag}: {config.task.digits}-digit addition")
    results["wall_s"] = time.perf_counter() - t_start
    results["machine"] = common_report.machine()
    if mesh_lib.is_primary():
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), results_table(results) + "\n")
    logging.info("lm: held-out exact match %.3f (%d/%d)", results["eval"]["exact_match"],
                 results["eval"]["num_correct"], results["eval"]["num_eval"])
    return results
