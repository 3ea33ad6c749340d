"""The workspace LM of a SWE-Gym run: tokenizer, base model, policies, fine-tunes.

    lm = base(ctx, bench)                  # models/tokenizer.json, models/base/
    recs = lm.evaluate(lm.base_params, bench.test)       # T = 0, one rollout each
    params = lm.finetune(convs, lm.base_params, "warm", min_steps=100)   # models/warm/

Every fine-tune goes through `lib.lm.finetune.finetune` with `rft.schedule` (steps,
warm-up cap, weight decay 0.01) in the stage dir `models/<name>/` (checkpointed, so a
rerun restores it instead of training again).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from lib.common import guards
from lib.lm import chat
from lib.lm import finetune as lm_finetune
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig
from lib.lm.tokenizer import Tokenizer, train_bpe
from lib.swe_gym import config_schema, policies, pretrain, rft


@dataclasses.dataclass
class WorkspaceLM:
    ctx: Any
    cfg: LMConfig
    tok: Tokenizer
    base_params: Any
    pretrain_examples: int       # synthetic repairs that fit the context
    pretrain_steps: int

    def policy(self, params, temperature: float, seed: int, lm=None):
        """The fixed fix(line, op) workflow driven by `lm` (default: a LocalLM of `params`)."""
        c = self.ctx.config.lm
        return policies.WorkspaceLMPolicy(
            LocalLM(self.cfg, params, self.tok) if lm is None else lm,
            temperature=temperature, max_edits=c.max_edits, max_tokens=c.max_tokens, seed=seed)

    def evaluate(self, params, insts: list[dict]) -> list[dict]:
        """One greedy rollout per instance (seed 7 + index), graded, memoised."""
        return self.ctx.collect(insts, lambda i, r: self.policy(params, 0.0, 7 + i))

    def fits(self, convs: list) -> list:
        """The conversations whose rendered tokens fit the model's context."""
        return [c for c in convs if len(self.tok.encode(chat.render_chat(
            c, add_generation_prompt=False), allow_special=True)) <= self.cfg.max_len]

    def finetune(self, convs, init, name: str, min_steps: int, *, epochs: int | None = None,
                 batch_size: int | None = None, lr: float | None = None,
                 warmup_steps: int = 0) -> tuple[Any, dict]:
        """(params, info) of `init` fine-tuned on `convs` in `models/<name>/`; the schedule
        defaults to the `rft` block. ValueError when `convs` is empty."""
        guards.check_preempted(f"fine-tune {name}")
        e, seed = self.ctx.config.rft, self.ctx.config.seed
        batch_size = batch_size or e.batch_size
        optim, loop = rft.schedule(len(convs), epochs=epochs or e.epochs, min_steps=min_steps,
                                   batch_size=batch_size, lr=lr or e.lr, seed=seed,
                                   warmup_steps=warmup_steps)
        lm, info = lm_finetune.finetune(self.cfg, self.tok, rft.repeat_to_batch(convs, batch_size),
                                        self.ctx.models.dir(name), batch_size=batch_size,
                                        seed=seed, loop=loop, optim=optim, base_params=init)
        return lm.params, info


def tokenizer(ctx, convs: list) -> Tokenizer:
    """Stage `models/tokenizer.json`: byte BPE (`lm.bpe_merges` merges) trained on the first
    2,000 rendered conversations, or plain bytes with 0 merges."""
    def build(_):
        texts = [chat.render_chat(c, add_generation_prompt=False) for c in convs[:2000]]
        merges = ctx.config.lm.bpe_merges
        return (train_bpe(texts, merges) if merges else Tokenizer()).to_dict()
    return Tokenizer.from_dict(ctx.models.run("tokenizer", build))


def base(ctx, bench) -> WorkspaceLM:
    """The base model: trained from scratch on `pretrain.num_examples` synthetic line
    repairs of the training repositories (those that fit), one epoch or `pretrain.steps`,
    warm-up 50 steps (capped at a quarter of the run)."""
    config, p = ctx.config, ctx.config.pretrain
    syn = pretrain.examples(bench.train_specs, p.num_examples, config.seed)
    tok = tokenizer(ctx, syn)
    lm = WorkspaceLM(ctx, config_schema.lm_config(config, tok.vocab_size), tok, None, 0, 0)
    fits = lm.fits(syn)
    params, info = lm.finetune(fits, None, "base", p.steps, epochs=1, batch_size=p.batch_size,
                               lr=p.lr, warmup_steps=50)
    return dataclasses.replace(lm, base_params=params, pretrain_examples=len(fits),
                               pretrain_steps=info["steps"])
