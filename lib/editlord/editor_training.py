"""The editors: one BPE tokenizer for all variants (cached in the workdir) and one
from-scratch fine-tune per variant through `lib.lm.finetune` (conversations longer than
`editor.model.max_len` are skipped and counted)."""
from __future__ import annotations

import os

from lib.common import mesh as mesh_lib
from lib.common import train_loop
from lib.lm import finetune
from lib.lm.local import LocalLM
from lib.lm.tokenizer import Tokenizer, train_bpe


def build_tokenizer(config, texts, path: str) -> Tokenizer:
    """The tokenizer stored at `path`, else BPE with `editor.bpe_merges` merges on `texts`
    (saved to `path`)."""
    if os.path.exists(path):
        return Tokenizer.load(path)
    tok = train_bpe(texts, config.editor.bpe_merges)
    if mesh_lib.is_primary():
        tok.save(path)
    return tok


def train_editor(config, variant: str, convs, tok: Tokenizer, workdir: str,
                 mesh) -> tuple[LocalLM, dict]:
    """The editor of `variant` trained on `convs` in `workdir` (resumes), and the summary of
    `finetune.finetune` (steps, resumed_from, too_long, loss_curve, final_loss, ...).
    A ValueError (e.g. fewer conversations fit than the batch size) names the variant."""
    cfg = finetune.lm_config(config.editor.model, tok.vocab_size)
    try:
        return finetune.finetune(
            cfg, tok, convs, workdir, mesh, batch_size=config.editor.batch_size,
            seed=config.seed, loop=train_loop.LoopConfig.from_config(config.train),
            optim=finetune.optimizer_settings(config.editor.optim, config.train.num_steps),
            skip_too_long=True)
    except ValueError as e:
        raise ValueError(f"variant {variant}: {e}") from None
