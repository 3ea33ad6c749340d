"""The workspace's own model behind the `LanguageModel` interface (same as a served model).

    lm = LocalLM.from_workdir("workdirs/lm_quick")
    result = lm.chat([{"role": "user", "content": "0347+0085"}], temperature=0, max_tokens=60)

`LocalLM.chat` renders messages with the local chat template (lib/lm/chat.py), samples
with lib/lm/sampling.py (stop at `<|end|>`/`<|eos|>`, plus stop strings), and turns
`<|tool_call|>` blocks into OpenAI-style tool calls. The server (lib/lm/server.py) wraps
exactly this object, so a client talking to the server and code holding a `LocalLM` see
the same answers for the same request and seed. `ContextFitted(lm)` caps `max_tokens` at
the room the prompt leaves in the context, as a server does.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from lib.common import optim, train_loop
from lib.common import workdir as wd
from lib.lm import chat, sampling, sft
from lib.lm.client import (
    ChatResult,
    Choice,
    LanguageModel,
    TokenLogprob,
    check_sampling_args,
)
from lib.lm.model import LMConfig, init_params
from lib.lm.tokenizer import Tokenizer


def load_run(workdir: str) -> tuple[LMConfig, Any, Tokenizer, int]:
    """(model config, params, tokenizer, step) of the newest checkpoint of an SFT run
    (`sft.save_run_spec` files + train_loop checkpoints); ValueError naming what is missing."""
    spec_path = os.path.join(workdir, sft.MODEL_FILE)
    tok_path = os.path.join(workdir, sft.TOKENIZER_FILE)
    for path in (spec_path, tok_path):
        if not os.path.exists(path):
            raise ValueError(f"{path} is missing; {workdir!r} is not a lib/lm training run")
    spec = wd.read_json(spec_path)
    cfg = LMConfig(**spec["model"])
    opt_kw = spec["optimizer"]
    abstract = jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))
    opt = sft.make_optimizer(**opt_kw, params=abstract)

    def init_state(key):
        return optim.init_state(init_params(cfg, key), opt)

    task = train_loop.Task(init_state, None, None, 1)
    state, step = train_loop.restore_trained(task, workdir)
    return cfg, jax.device_get(state["params"]), Tokenizer.load(tok_path), step


class LocalLM(LanguageModel):
    """A `TransformerLM` checkpoint answering `chat`/`complete` in-process."""

    def __init__(self, cfg: LMConfig, params: Any, tokenizer: Tokenizer, name: str = "local",
                 use_cache: bool = True):
        if tokenizer.vocab_size != cfg.vocab_size:
            raise ValueError(f"tokenizer vocabulary {tokenizer.vocab_size} != model vocab_size "
                             f"{cfg.vocab_size}")
        self.cfg, self.params, self.tok, self.name = cfg, params, tokenizer, name
        self.use_cache = use_cache
        self._lock = threading.Lock()   # one generation at a time (jit caches are shared)
        self._stop_ids = tuple(tokenizer.special_id(s) for s in ("<|end|>", "<|eos|>")
                               if s in tokenizer.special_ids)

    @classmethod
    def from_workdir(cls, workdir: str, **kw) -> LocalLM:
        cfg, params, tok, _ = load_run(workdir)
        return cls(cfg, params, tok, **kw)

    # -------------------------------------------------------------------- generation
    def _sample(self, prompt_ids: list[int], *, n, max_tokens, temperature, top_p, stop,
                top_logprobs, seed) -> list[tuple[str, sampling.Sample]]:
        if seed is None:    # like a served model: fresh samples unless a seed is given
            seed = int(np.random.SeedSequence().entropy % 2 ** 31)
        key = jax.random.key(seed)
        with self._lock:
            samples = sampling.generate(
                self.cfg, self.params, [prompt_ids], key=key, n=n, max_tokens=max_tokens,
                temperature=temperature, top_p=top_p, stop_ids=self._stop_ids,
                top_logprobs=top_logprobs, use_cache=self.use_cache)[0]
        return [sampling.apply_stop_strings(s, self.tok.decode, stop or ()) for s in samples]

    def _logprobs(self, s: sampling.Sample, top: int) -> list[TokenLogprob]:
        out = []
        for j, (t, lp) in enumerate(zip(s.tokens, s.logprobs)):
            alts = [(self.tok.token_text(i), v) for i, v in s.top_logprobs[j]] if top else []
            out.append(TokenLogprob(self.tok.token_text(t), float(lp), alts, t))
        return out

    def count_tokens(self, text: str) -> int:
        return len(self.tok.encode(text, allow_special=True))

    def chat(self, messages: Sequence[dict], *, n: int = 1, temperature: float = 1.0,
             top_p: float = 1.0, max_tokens: int = 256, stop: Sequence[str] | None = None,
             logprobs: bool = False, top_logprobs: int = 0, tools: Sequence[dict] | None = None,
             seed: int | None = None) -> ChatResult:
        check_sampling_args(n, temperature, top_p, max_tokens, top_logprobs)
        prompt = chat.render_chat(messages, tools=tools)
        ids = self.tok.encode(prompt, allow_special=True)
        choices = []
        for i, (text, s) in enumerate(self._sample(
                ids, n=n, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                stop=stop, top_logprobs=top_logprobs, seed=seed)):
            content, calls = chat.parse_local_tool_calls(text) if tools else (text, [])
            reason = "tool_calls" if calls else s.finish_reason
            choices.append(Choice(i, content, calls, reason,
                                  self._logprobs(s, top_logprobs) if logprobs else None,
                                  len(s.tokens)))
        return ChatResult(choices, self.name, len(ids), sum(c.completion_tokens for c in choices))

    def complete(self, prompt: str, *, n: int = 1, temperature: float = 1.0, top_p: float = 1.0,
                 max_tokens: int = 256, stop: Sequence[str] | None = None,
                 logprobs: bool = False, top_logprobs: int = 0,
                 seed: int | None = None) -> ChatResult:
        check_sampling_args(n, temperature, top_p, max_tokens, top_logprobs)
        ids = self.tok.encode(prompt, allow_special=True)
        choices = []
        for i, (text, s) in enumerate(self._sample(
                ids, n=n, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                stop=stop, top_logprobs=top_logprobs, seed=seed)):
            choices.append(Choice(i, text, [], s.finish_reason,
                                  self._logprobs(s, top_logprobs) if logprobs else None,
                                  len(s.tokens)))
        return ChatResult(choices, self.name, len(ids), sum(c.completion_tokens for c in choices))

    def score(self, prompt: str, continuation: str) -> np.ndarray:
        """Per-token log-probs of `continuation` after `prompt` (both raw template text)."""
        p = self.tok.encode(prompt, allow_special=True)
        c = self.tok.encode(continuation, allow_special=True)
        return sampling.score(self.cfg, self.params, p, c)


class ContextFitted(LocalLM):
    """A `LocalLM` whose `chat` cuts `max_tokens` to the room its context leaves after the
    prompt (a served model's server does the same with its context length); ValueError when
    no room is left."""

    def __init__(self, lm: LocalLM):
        super().__init__(lm.cfg, lm.params, lm.tok, name=lm.name)

    def chat(self, messages, *, max_tokens: int = 256, **kw):
        used = self.count_tokens(chat.render_chat(messages))
        room = self.cfg.max_len - used
        if room < 1:
            raise ValueError(f"a {used}-token prompt leaves no room in the context of "
                             f"{self.cfg.max_len} tokens")
        return super().chat(messages, max_tokens=min(max_tokens, room), **kw)
