"""Supervised fine-tuning on chat-formatted JSONL: prompt loss masking, LoRA, a train_loop Task.

Data: one JSON object per line, `{"messages": [{"role", "content", "tool_calls"?}, ...]}`
(the format OpenAI-style fine-tuning, torchtune and Unsloth read; SWE-Gym trajectories and
EditLord's augmented pairs are exported to it). `load_chat_jsonl` names the file and line
of any malformed record before training starts.

Loss (per batch; the standard "train_on_inputs = False" objective):

    L = sum_{b,t} m[b,t] * (-log p(x[b,t+1] | x[b,:t+1])) / sum m

with m = 1 exactly on the tokens of assistant turns (their body and closing `<|end|>`),
0 on system/user/tool turns, role tags and padding (`train_on_prompt=True` sets m = 1 on
every real token).

LoRA: `lora_labels(params)` marks the `lora_a`/`lora_b` leaves "train" and the rest
"freeze"; `make_optimizer(..., lora=True)` updates only the former (`optax.multi_transform`
with `set_to_zero`). `merge_base(lora_params, base_params)` copies a trained base model
into a freshly initialised LoRA model (whose update starts at zero).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lib.common import optim, train_loop
from lib.lm import chat
from lib.lm.model import LMConfig, forward, init_params
from lib.lm.tokenizer import Tokenizer
from lib.toolbox import jsonl


def load_chat_jsonl(path: str) -> list[list[dict]]:
    """Conversations from a chat JSONL file; ValueError naming `path:line` when bad."""
    out = []
    for where, record in jsonl.records(path):
        if "messages" not in record:
            raise ValueError(f"{where}: expected an object with a 'messages' list")
        try:
            msgs = chat.check_messages(record["messages"])
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        if not any(m["role"] == "assistant" for m in msgs):
            raise ValueError(f"{where}: no assistant turn to learn from")
        out.append(msgs)
    if not out:
        raise ValueError(f"{path}: no conversations")
    return out


def write_chat_jsonl(path: str, conversations: Sequence[Sequence[dict]]) -> None:
    with open(path, "w") as f:
        f.writelines(json.dumps({"messages": list(msgs)}) + "\n" for msgs in conversations)


def encode_conversation(tok: Tokenizer, messages: Sequence[dict], max_len: int,
                        train_on_prompt: bool = False,
                        tools: Sequence[dict] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ids (T,), loss mask (T,)) of a conversation in the local chat template.

    mask[t] = 1 when ids[t] is a token the model must predict (an assistant token); the
    loss uses it on the *target* side. `tools` (OpenAI tool specs) are stated in a system
    turn first, exactly as `LocalLM.chat(..., tools=...)` renders them. ValueError when the conversation exceeds `max_len`.
    """
    ids: list[int] = []
    mask: list[int] = []
    for text, is_out in chat.render_chat_segments(messages, tools):
        part = tok.encode(text, allow_special=True)
        ids.extend(part)
        mask.extend([1 if (is_out or train_on_prompt) else 0] * len(part))
    if len(ids) > max_len:
        raise ValueError(f"a conversation has {len(ids)} tokens, more than the context "
                         f"max_len = {max_len}; shorten it or raise model.max_len")
    return np.asarray(ids, np.int32), np.asarray(mask, np.int32)


def pad_examples(examples: Sequence[tuple[np.ndarray, np.ndarray]], width: int,
                 pad_id: int) -> dict[str, np.ndarray]:
    """Right-pad to `width`: {"tokens" (N, W) int32, "mask" (N, W) int32, "valid" (N, W) bool}."""
    n = len(examples)
    tokens = np.full((n, width), pad_id, np.int32)
    mask = np.zeros((n, width), np.int32)
    valid = np.zeros((n, width), bool)
    for i, (ids, m) in enumerate(examples):
        tokens[i, :len(ids)] = ids
        mask[i, :len(ids)] = m
        valid[i, :len(ids)] = True
    return {"tokens": tokens, "mask": mask, "valid": valid}


def masked_nll(cfg: LMConfig, params: Any, batch: dict) -> tuple[jax.Array, dict]:
    """Mean next-token NLL over target tokens with mask 1 (module docstring); also the
    token accuracy on those tokens."""
    logits = forward(cfg, params, batch["tokens"], batch["valid"])[:, :-1]
    targets = batch["tokens"][:, 1:]
    m = batch["mask"][:, 1:].astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, axis=-1)
    nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    denom = jnp.maximum(m.sum(), 1.0)
    acc = ((jnp.argmax(logits, -1) == targets) * m).sum() / denom
    return (nll * m).sum() / denom, {"token_accuracy": acc}


def lora_labels(params: Any) -> Any:
    """"train" on LoRA leaves (`lora_a`, `lora_b`), "freeze" elsewhere."""
    def label(path, _):
        names = [getattr(k, "key", getattr(k, "name", "")) for k in path]
        return "train" if any(str(n).startswith("lora_") for n in names) else "freeze"
    return jax.tree_util.tree_map_with_path(label, params)


def make_optimizer(lr: float, num_steps: int, *, warmup_steps: int = 0, weight_decay: float = 0.0,
                   grad_clip: float = 1.0, lora: bool = False, params: Any = None):
    """`lib.common.optim`'s AdamW with clipping, linear warm-up and cosine decay to lr / 10;
    LoRA-only updates when `lora`."""
    # warmup_steps = 0 holds lr for step 0 and decays over the remaining steps, as every
    # recorded LM run (SWE-Gym's RFT rounds, EditLord tiny) did; kept so they reproduce
    base = optim.make_optimizer(dict(name="adamw", lr=lr, schedule="cosine",
                                     warmup=warmup_steps or 1,
                                     warmup_from=0.0 if warmup_steps else 1.0,
                                     end_lr_factor=0.1, clip=grad_clip,
                                     weight_decay=weight_decay), num_steps)
    if not lora:
        return base
    if params is None:
        raise ValueError("LoRA needs the params (to label which leaves train)")
    labels = lora_labels(params)
    if "train" not in jax.tree.leaves(labels):
        raise ValueError("lora=True but the model has no lora_a/lora_b parameters; "
                         "set model.lora_rank > 0")
    return optax.multi_transform({"train": base, "freeze": optax.set_to_zero()}, labels)


def merge_base(lora_params: Any, base_params: Any) -> Any:
    """`lora_params` with every non-LoRA leaf taken from `base_params` (same paths)."""
    base_flat = {jax.tree_util.keystr(p): v for p, v in
                 jax.tree_util.tree_flatten_with_path(base_params)[0]}

    def pick(path, leaf):
        key = jax.tree_util.keystr(path)
        if "lora_" in key:
            return leaf
        if key not in base_flat:
            raise ValueError(f"base params lack {key}; is it the same architecture?")
        if base_flat[key].shape != leaf.shape:
            raise ValueError(f"{key}: base shape {base_flat[key].shape} != {leaf.shape}")
        return base_flat[key]
    return jax.tree_util.tree_map_with_path(pick, lora_params)


def make_task(cfg: LMConfig, data: dict[str, np.ndarray], *, batch_size: int, lr: float,
              num_steps: int, warmup_steps: int = 0, weight_decay: float = 0.0,
              grad_clip: float = 1.0, seed: int = 0, lora: bool = False,
              base_params: Any = None) -> train_loop.Task:
    """A `train_loop.Task` over padded examples `data` (see `pad_examples`).

    Batches: step s takes a permutation of the examples seeded by (seed, epoch) and its
    s-th slice, so the batch is a function of the step alone (exact resume).
    With `lora`, `base_params` (a trained model, same architecture with lora_rank = 0) are
    merged into the initial state and only the LoRA leaves are updated.
    """
    n = len(data["tokens"])
    if n < batch_size:
        raise ValueError(f"{n} training examples are fewer than batch_size = {batch_size}")
    abstract = jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))
    opt = make_optimizer(lr, num_steps, warmup_steps=warmup_steps, weight_decay=weight_decay,
                         grad_clip=grad_clip, lora=lora, params=abstract)

    def init_state(key):
        params = init_params(cfg, key)
        if base_params is not None:
            params = merge_base(params, base_params)
        return optim.init_state(params, opt)

    def train_step(state, batch, key):
        del key
        (loss, aux), grads = jax.value_and_grad(
            lambda p: masked_nll(cfg, p, batch), has_aux=True)(state["params"])
        return (train_loop.apply_gradients(state, grads, opt),
                {"loss": loss, "grad_norm": optax.tree.norm(grads), **aux})

    return train_loop.Task(init_state, train_step,
                           train_loop.epoch_batches(data, batch_size, seed), batch_size)


# ----------------------------------------------------------------------------- run files

MODEL_FILE = "lm_model.json"       # LMConfig + optimizer settings (to rebuild the state tree)
TOKENIZER_FILE = "tokenizer.json"


def save_run_spec(workdir: str, cfg: LMConfig, tok: Tokenizer, optim: dict) -> None:
    """Write what `lib.lm.local.load_run` needs beside the checkpoints: the model config,
    the optimizer settings (`make_optimizer` kwargs; the state tree holds its state) and
    the tokenizer."""
    import dataclasses
    import os

    from lib.common import workdir as wd
    wd.write_json_atomic(os.path.join(workdir, MODEL_FILE),
                         {"model": dataclasses.asdict(cfg), "optimizer": dict(optim)})
    tok.save(os.path.join(workdir, TOKENIZER_FILE))
