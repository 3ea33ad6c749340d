"""The one supervised fine-tuning path of the workspace's LMs (JETTS, EditLord, SWE-Gym).

    lm, info = finetune(cfg, tok, convs, workdir, mesh, batch_size=8, seed=0,
                        loop=train_loop.LoopConfig(num_steps=200, ...),
                        optim=optimizer_settings(config.editor.optim, 200))

Conversations are encoded with loss on the assistant turns (`sft.encode_conversation`),
padded to the longest, trained through `lib.common.train_loop` in `workdir` (checkpointed,
resumable, `guards.Preempted` on SIGTERM), with `sft.save_run_spec` beside the checkpoints
so that `lib.lm.local.load_run(workdir)` rebuilds the model. `served_lm` is the one way a
config's `served` block becomes an OpenAI-compatible client.
"""
from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import jax

from lib.common import mesh as mesh_lib
from lib.common import metrics as metrics_lib
from lib.common import train_loop
from lib.lm import sft
from lib.lm.local import LocalLM
from lib.lm.model import LMConfig
from lib.lm.tokenizer import Tokenizer


def lm_config(model_block, vocab_size: int) -> LMConfig:
    """The `LMConfig` of a config's `model` block (d_model, num_layers, num_heads, d_ff,
    max_len, dtype) for a tokenizer of `vocab_size`."""
    m = model_block
    return LMConfig(vocab_size=vocab_size, d_model=m.d_model, num_layers=m.num_layers,
                    num_heads=m.num_heads, d_ff=m.d_ff, max_len=m.max_len, dtype=m.dtype)


def optimizer_settings(optim_block, num_steps: int) -> dict:
    """`sft.make_optimizer` keyword arguments from an `optim` block (lr, warmup,
    weight_decay, clip) for a run of `num_steps`."""
    o = optim_block
    return dict(lr=o.lr, num_steps=num_steps, warmup_steps=o.warmup,
                weight_decay=o.weight_decay, grad_clip=o.clip)


def encode(tok: Tokenizer, convs: Sequence[Sequence[dict]], max_len: int, *,
           skip_too_long: bool = False) -> tuple[dict, int]:
    """(padded SFT arrays, number skipped): one row per conversation that fits `max_len`
    tokens; a longer one raises ValueError unless `skip_too_long`."""
    examples, too_long = [], 0
    for c in convs:
        try:
            examples.append(sft.encode_conversation(tok, c, max_len))
        except ValueError:
            if not skip_too_long:
                raise
            too_long += 1
    if not examples:
        raise ValueError(f"no conversation fits max_len = {max_len} tokens")
    width = max(len(ids) for ids, _ in examples)
    return sft.pad_examples(examples, width, tok.pad_id), too_long


def finetune(cfg: LMConfig, tok: Tokenizer, convs: Sequence[Sequence[dict]], workdir: str,
             mesh=None, *, batch_size: int, seed: int, loop: train_loop.LoopConfig,
             optim: dict, base_params: Any = None, skip_too_long: bool = False,
             name: str = "local") -> tuple[LocalLM, dict]:
    """Fine-tune from `base_params` (same architecture), or train from scratch when None,
    on `convs` in `workdir`; the trained `LocalLM` and a summary: steps, resumed_from,
    wall_s, examples, too_long, tokens_per_example, loss_curve [(step, loss)], final_loss.

    `optim` holds `sft.make_optimizer` keyword arguments (see `optimizer_settings`).
    ValueError before any compute when fewer conversations fit than `batch_size`.
    """
    data, too_long = encode(tok, convs, cfg.max_len, skip_too_long=skip_too_long)
    n = len(data["tokens"])
    if n < batch_size:
        raise ValueError(f"{n} training conversations fit max_len = {cfg.max_len}; fewer "
                         f"than the batch size {batch_size}")
    if mesh is None:                                  # one device, as a notebook would
        mesh = mesh_lib.make_mesh(1, 1, devices=jax.devices()[:1])
    os.makedirs(workdir, exist_ok=True)
    if mesh_lib.is_primary():
        sft.save_run_spec(workdir, cfg, tok, optim)
    task = sft.make_task(cfg, data, batch_size=batch_size, seed=seed, base_params=base_params,
                         **optim)
    t0 = time.perf_counter()
    res = train_loop.train(task, loop, workdir=workdir, mesh=mesh)   # Preempted on SIGTERM
    losses = [(r["step"], r["loss"]) for r in metrics_lib.read_metrics(workdir)
              if "loss" in r and "step" in r]
    info = {"steps": res.step, "resumed_from": res.resumed_from,
            "wall_s": time.perf_counter() - t0, "examples": n, "too_long": too_long,
            "tokens_per_example": int(data["tokens"].shape[1]),
            "loss_curve": losses, "final_loss": losses[-1][1] if losses else None}
    return LocalLM(cfg, jax.device_get(res.state["params"]), tok, name=name), info


def served_lm(served_block):
    """An `OpenAIClient` for a config's `served` block: base_url, model, cache_dir, and
    where the block has them, api_key_env (the key is read from that environment
    variable) and tool_mode (auto | native | text; "auto" when the block has none)."""
    from lib.lm.client import OpenAIClient
    s = served_block
    key_env = s.get("api_key_env", "")
    return OpenAIClient(s.base_url, s.model,
                        api_key=os.environ.get(key_env) if key_env else None,
                        cache_dir=s.cache_dir or None, tool_mode=s.get("tool_mode", "auto"))
