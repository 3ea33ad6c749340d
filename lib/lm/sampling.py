"""Sampling from a `TransformerLM` (KV cache or full recompute) and scoring continuations.

    samples = generate(cfg, params, [prompt_ids], n=4, max_tokens=64, temperature=0.8,
                       top_p=0.95, stop_ids=(end_id,), key=jax.random.key(0))
    logps = score(cfg, params, prompt_ids, continuation_ids)        # (C,) per token

Decoding (one jitted `lax.while_loop`; shapes are static, so prompts are left-padded to a
bucket of 16, the output buffer is `max_tokens` rounded up to a power of two (capped by the
context) with the loop stopping at `max_tokens` itself, and each distinct (batch, bucket,
buffer) compiles once: a new `max_tokens` or `n` in the same powers of two costs no compile;
past MAX_SHAPES distinct shapes the compiled decoders are dropped, so memory stays bounded):

* prompts are left-padded; positions count real tokens, so padding changes nothing;
* `use_cache=True`: a prefill pass writes the prompt's keys/values into an
  `init_cache(B, P + max_tokens)` cache, then each step feeds one token (O(T) per step);
  `use_cache=False`: each step recomputes the whole fixed-length buffer (O(T²) per step,
  the baseline of tools/bench/lm_sampling.py). Both give the same greedy tokens (tested);
  the batch (prompts × n) is padded to a power of two, again to limit compiles;
* temperature 0 is greedy (argmax); otherwise softmax(logits / temperature) restricted
  to the smallest set of tokens whose probability reaches `top_p` (nucleus sampling);
* a row stops at its first token in `stop_ids` (at most MAX_STOPS; the stop token is
  not returned; finish_reason "stop") or
  after `max_tokens` (finish_reason "length"); stop *strings* are applied on the host
  afterwards (the text is cut before the first one, the tokens and log-probs after the
  last token that ends at or before it);
* reported log-probs are the model's own, log softmax(logits) at temperature 1 with no
  top-p, which is what `score` returns for the same tokens (tested) and what an
  OpenAI-compatible server's `logprobs` means; `top_logprobs` = the K most likely tokens.
"""
from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from lib.lm.model import LMConfig, TransformerLM, init_cache

BUCKET = 16


class Sample(NamedTuple):
    tokens: list[int]                      # generated ids, stop token excluded
    logprobs: list[float]                  # model log-prob of each generated id
    top_logprobs: list[list[tuple[int, float]]] | None   # per position, K (id, log-prob)
    finish_reason: str                     # "stop" | "length"


def _bucket(n: int, cap: int) -> int:
    return min(-(-n // BUCKET) * BUCKET, cap)


def _pow2(n: int) -> int:
    """The smallest power of two >= n (n >= 1)."""
    return 1 << (n - 1).bit_length()


def check_lengths(cfg: LMConfig, prompt_len: int, max_tokens: int) -> None:
    """ValueError before any compute when a request does not fit the context."""
    if prompt_len < 1:
        raise ValueError("the prompt is empty; give at least one token")
    if max_tokens < 1:
        raise ValueError(f"max_tokens = {max_tokens} must be >= 1")
    if prompt_len + max_tokens > cfg.max_len:
        raise ValueError(f"the prompt has {prompt_len} tokens and max_tokens = {max_tokens}; "
                         f"together they exceed the model's context of {cfg.max_len} tokens")


def _choose(logits, key, temperature, top_p):
    """Next token (B,) from logits (B, V): greedy when temperature == 0, else nucleus."""
    greedy = jnp.argmax(logits, axis=-1)
    scaled = logits / jnp.maximum(temperature, 1e-6)
    order = jnp.argsort(-scaled, axis=-1)
    sorted_logits = jnp.take_along_axis(scaled, order, axis=-1)
    probs = jax.nn.softmax(sorted_logits, axis=-1)
    keep = (jnp.cumsum(probs, axis=-1) - probs) < top_p          # the first always kept
    masked = jnp.where(keep, sorted_logits, -jnp.inf)
    pick = jax.random.categorical(key, masked, axis=-1)
    sampled = jnp.take_along_axis(order, pick[:, None], axis=-1)[:, 0]
    return jnp.where(temperature > 0, sampled, greedy)


MAX_TOP = 20     # top log-probs are always computed for this many tokens (one compile)
MAX_STOPS = 8    # stop token ids are a padded array, so they do not trigger compiles
MAX_SHAPES = 32  # distinct decode shapes kept compiled at once


@functools.partial(jax.jit, static_argnames=("cfg", "max_tokens", "use_cache"))
def _decode(params, prompt, valid, key, temperature, top_p, stops, limit, *, cfg: LMConfig,
            max_tokens: int, use_cache: bool):
    """prompt/valid (B, P) left-padded, stops (MAX_STOPS,) ids padded with -1, limit () the
    tokens to generate (<= max_tokens, traced: no compile per value) -> tokens (B, N),
    logprobs (B, N), top ids/logprobs (B, N, K), lengths (B,), stopped (B,) with
    N = max_tokens (the buffer), K = min(MAX_TOP, V)."""
    model = TransformerLM(cfg)
    b, p = prompt.shape
    prompt_len = valid.sum(axis=1).astype(jnp.int32)
    positions = jnp.maximum(jnp.cumsum(valid.astype(jnp.int32), axis=1) - 1, 0)
    k = min(MAX_TOP, cfg.vocab_size)

    if use_cache:
        cache = init_cache(cfg, b, p + max_tokens)
        logits, cache = model.apply(params, prompt, positions, valid, cache=cache, cache_index=0)
        carry_model = cache
    else:
        buf = jnp.concatenate([prompt, jnp.zeros((b, max_tokens), prompt.dtype)], axis=1)
        buf_valid = jnp.concatenate([valid, jnp.zeros((b, max_tokens), bool)], axis=1)
        buf_pos = jnp.concatenate(
            [positions, prompt_len[:, None] + jnp.arange(max_tokens)[None]], axis=1)
        logits, _ = model.apply(params, prompt, positions, valid)
        carry_model = (buf, buf_valid)
    last = logits[:, -1]

    out = dict(tokens=jnp.zeros((b, max_tokens), jnp.int32),
               logprobs=jnp.zeros((b, max_tokens), jnp.float32),
               top_ids=jnp.zeros((b, max_tokens, k), jnp.int32),
               top_lps=jnp.zeros((b, max_tokens, k), jnp.float32))

    def cond(state):
        j, done = state[0], state[4]
        return (j < limit) & ~jnp.all(done)

    def body(state):
        j, carry, last, out, done, key, length, stopped = state
        key, sub = jax.random.split(key)
        logp = jax.nn.log_softmax(last, axis=-1)
        tok = jnp.where(done, 0, _choose(last, sub, temperature, top_p).astype(jnp.int32))
        is_stop = jnp.any(tok[:, None] == stops[None], axis=1) & ~done
        tv, ti = jax.lax.top_k(logp, k)
        out = dict(tokens=out["tokens"].at[:, j].set(tok),
                   logprobs=out["logprobs"].at[:, j].set(
                       jnp.take_along_axis(logp, tok[:, None], axis=1)[:, 0]),
                   top_ids=out["top_ids"].at[:, j].set(ti),
                   top_lps=out["top_lps"].at[:, j].set(tv))
        step_valid = ~done
        pos = prompt_len + j
        if use_cache:
            logits, carry = model.apply(params, tok[:, None], pos[:, None], step_valid[:, None],
                                        cache=carry, cache_index=p + j)
            nxt = logits[:, 0]
        else:
            buf, bval = carry
            buf = buf.at[:, p + j].set(tok)
            bval = bval.at[:, p + j].set(step_valid)
            logits, _ = model.apply(params, buf, buf_pos, bval)
            nxt = jax.lax.dynamic_index_in_dim(logits, p + j, axis=1, keepdims=False)
            carry = (buf, bval)
        length = length + step_valid.astype(jnp.int32)      # includes the stop token
        return (j + 1, carry, nxt, out, done | is_stop, key, length, stopped | is_stop)

    state = (jnp.int32(0), carry_model, last, out, jnp.zeros((b,), bool), key,
             jnp.zeros((b,), jnp.int32), jnp.zeros((b,), bool))
    state = jax.lax.while_loop(cond, body, state)
    _, _, _, out, _, _, length, stopped = state
    return out["tokens"], out["logprobs"], out["top_ids"], out["top_lps"], length, stopped


_shapes: collections.OrderedDict = collections.OrderedDict()
_shapes_lock = threading.Lock()


def _note_shape(shape: tuple) -> None:
    """Record a decode shape; a new one beyond MAX_SHAPES drops every compiled decoder."""
    with _shapes_lock:
        if shape in _shapes:
            _shapes.move_to_end(shape)
            return
        if len(_shapes) >= MAX_SHAPES:
            _decode.clear_cache()
            _shapes.clear()
        _shapes[shape] = None


def left_pad(prompts: Sequence[Sequence[int]], width: int, pad_id: int = 0):
    """(tokens (N, width), valid (N, width)) with each prompt at the right end."""
    tokens = np.full((len(prompts), width), pad_id, np.int32)
    valid = np.zeros((len(prompts), width), bool)
    for i, pr in enumerate(prompts):
        tokens[i, width - len(pr):] = pr
        valid[i, width - len(pr):] = True
    return tokens, valid


def generate(cfg: LMConfig, params: Any, prompts: Sequence[Sequence[int]], *, key: jax.Array,
             n: int = 1, max_tokens: int = 64, temperature: float = 1.0, top_p: float = 1.0,
             stop_ids: Sequence[int] = (), top_logprobs: int = 0,
             use_cache: bool = True) -> list[list[Sample]]:
    """`n` samples for each prompt: a list (per prompt) of lists (per sample) of `Sample`."""
    if not prompts:
        raise ValueError("no prompts given")
    if n < 1:
        raise ValueError(f"n = {n} must be >= 1")
    if temperature < 0 or not 0 < top_p <= 1:
        raise ValueError(f"temperature = {temperature} must be >= 0 and top_p = {top_p} in (0, 1]")
    if not 0 <= top_logprobs <= min(MAX_TOP, cfg.vocab_size):
        raise ValueError(f"top_logprobs = {top_logprobs} must be in [0, "
                         f"{min(MAX_TOP, cfg.vocab_size)}]")
    longest = max(len(p) for p in prompts)
    for pr in prompts:
        check_lengths(cfg, len(pr), max_tokens)
        bad = [t for t in pr if not 0 <= t < cfg.vocab_size]
        if bad:
            raise ValueError(f"prompt token ids {bad[:5]} are outside [0, {cfg.vocab_size})")
    if len(stop_ids) > MAX_STOPS:
        raise ValueError(f"at most {MAX_STOPS} stop token ids, got {len(stop_ids)}")
    width = max(_bucket(longest, cfg.max_len - max_tokens), longest)
    buffer = min(_pow2(max_tokens), cfg.max_len - width)       # >= max_tokens (checked above)
    rows = [list(pr) for pr in prompts for _ in range(n)]
    # batch rows padded to a power of two (fewer compiles); the extra rows are dropped
    padded_rows = rows + [rows[0]] * (_pow2(len(rows)) - len(rows))
    tokens, valid = left_pad(padded_rows, width)
    _note_shape((cfg, len(padded_rows), width, buffer, use_cache))
    stops = np.full((MAX_STOPS,), -1, np.int32)
    stops[:len(stop_ids)] = stop_ids
    outs = _decode(params, jnp.asarray(tokens), jnp.asarray(valid), key,
                   jnp.float32(temperature), jnp.float32(top_p), jnp.asarray(stops),
                   jnp.int32(max_tokens), cfg=cfg, max_tokens=buffer, use_cache=use_cache)
    toks, lps, tids, tlps, length, stopped = (np.asarray(x) for x in outs)
    samples = []
    for r in range(len(rows)):
        m = int(length[r]) - (1 if stopped[r] else 0)
        top = None
        if top_logprobs:
            top = [[(int(tids[r, j, q]), float(tlps[r, j, q])) for q in range(top_logprobs)]
                   for j in range(m)]
        samples.append(Sample(toks[r, :m].tolist(), lps[r, :m].tolist(), top,
                              "stop" if stopped[r] else "length"))
    return [samples[i * n:(i + 1) * n] for i in range(len(prompts))]


def apply_stop_strings(sample: Sample, decode, stops: Sequence[str]) -> tuple[str, Sample]:
    """(text cut before the first stop string, the sample cut to the tokens that end at or
    before it); `decode` maps ids to text."""
    text = decode(sample.tokens)
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    if cut < 0:
        return text, sample
    keep = 0
    for m in range(len(sample.tokens) + 1):
        if len(decode(sample.tokens[:m])) <= cut:
            keep = m
        else:
            break
    top = sample.top_logprobs[:keep] if sample.top_logprobs is not None else None
    return text[:cut], Sample(sample.tokens[:keep], sample.logprobs[:keep], top, "stop")


@functools.partial(jax.jit, static_argnames=("cfg",))
def _token_logprobs(params, tokens, valid, *, cfg: LMConfig):
    """Log-prob of tokens[:, t+1] given tokens[:, :t+1]; (B, T-1)."""
    positions = jnp.maximum(jnp.cumsum(valid.astype(jnp.int32), axis=1) - 1, 0)
    logits, _ = TransformerLM(cfg).apply(params, tokens, positions, valid)
    logp = jax.nn.log_softmax(logits[:, :-1], axis=-1)
    return jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1)[..., 0]


def score_batch(cfg: LMConfig, params: Any,
                pairs: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[np.ndarray]:
    """Per-token log-probs of each continuation given its prompt (teacher forcing)."""
    seqs = []
    for prompt, cont in pairs:
        if len(cont) < 1:
            raise ValueError("a continuation to score is empty")
        check_lengths(cfg, len(prompt), len(cont))
        seqs.append(list(prompt) + list(cont))
    width = _bucket(max(len(s) for s in seqs), cfg.max_len)
    width = max(width, max(len(s) for s in seqs))
    tokens = np.zeros((len(seqs), width), np.int32)
    valid = np.zeros((len(seqs), width), bool)
    for i, s in enumerate(seqs):
        tokens[i, :len(s)] = s
        valid[i, :len(s)] = True
    lp = np.asarray(_token_logprobs(params, jnp.asarray(tokens), jnp.asarray(valid), cfg=cfg))
    return [lp[i, len(p) - 1:len(p) - 1 + len(c)] for i, (p, c) in enumerate(pairs)]


def score(cfg: LMConfig, params: Any, prompt: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
    """(len(continuation),) log p(continuation_t | prompt, continuation_<t)."""
    return score_batch(cfg, params, [(prompt, continuation)])[0]
