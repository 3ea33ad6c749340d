"""Outcome and process reward models: a scalar head on the workspace LM (JAX, Flax Linen).

    ex = encode_examples(tok, queries, texts, labels, kind="prm", sep=" ", max_len=96)
    task = training.make_task(cfg, base_params, ex, batch_size=32, lr=3e-4, num_steps=300)
    result = train_loop.train(task, loop_cfg, workdir=..., mesh=...)
    rm = RewardModelJudge("prm", cfg, result.state["params"], tok, kind="prm", sep=" ")

Model. The transformer of lib/lm/model.py (initialised from the generator's weights, all
of it fine-tuned) gives the final-LayerNorm hidden state h_t (D,) of every token (read with
Flax's `capture_intermediates`, so lib/lm is used unchanged); the head is
r_t = w . h_t + b, and p_t = sigmoid(r_t) is the probability that the response is good up
to and including token t.

Read-out positions. The response is tokenised step by step (steps split on the domain's
separator), so the last token of every step is known:
* ORM (outcome): one position, the last token of the response; label = the response's
  correctness (Cobbe et al. 2021 verifiers, scored at the end).
* PRM (process): the last token of every step; label of step k = 1 when every step up to
  and including k is correct (k < first wrong step), else 0 (Lightman et al. 2023 /
  Math-Shepherd style hard labels; exact here).
Loss (lib.jetts.training): mean binary cross-entropy over the read-out positions (masked).

Optional confidence input (`logprob_feature=True`, the head then has a third parameter a):
r_t = w . h_t + a * c_t + b with c_t = max(-20, min over response tokens s <= t of
log p_LM(x_s | x_<s)), the LM's (fine-tuned) log-probability of the least likely response
token so far, computed in the same forward pass. A small LM's hidden state at one token
hardly encodes "an earlier digit was wrong"; its own surprise at that digit does.

Scoring a (possibly partial) response: ORM -> p at its last token; PRM -> the minimum of
its steps' p ("min", the usual aggregation; "last" and "prod" are options). Both are
`judges.ScoreJudge`s, so every protocol uses them like any judge; sequences longer than
the context are cut to `max_len` tokens (the steps that fit are scored).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from lib.jetts.generators import local_template
from lib.jetts.judges import ScoreJudge
from lib.jetts.pools import Query
from lib.lm.model import LMConfig, TransformerLM
from lib.lm.tokenizer import Tokenizer

KINDS = ("orm", "prm")
AGGREGATIONS = ("min", "last", "prod")


def encode_one(tok: Tokenizer, q: Query, text: str, sep: str, max_len: int) -> tuple[list[int], list[int]]:
    """(token ids of prompt + response cut to max_len, last-token index of every step that fits)."""
    ids = tok.encode(local_template(q), allow_special=True)
    ends = []
    steps = [s for s in text.split(sep) if s]
    for k, st in enumerate(steps):
        ids += tok.encode((sep if k else "") + st)
        if len(ids) > max_len:
            break
        ends.append(len(ids) - 1)
    ids = ids[:max_len]
    if not ends:                       # an empty response: read the last prompt token
        ends = [min(len(ids), max_len) - 1]
    return ids, ends


def response_start(tok: Tokenizer, q: Query) -> int:
    """Index of the first response token (the prompt's length)."""
    return len(tok.encode(local_template(q), allow_special=True))


def encode_examples(tok: Tokenizer, queries: Sequence[Query], texts: Sequence[str],
                    labels: Sequence[Sequence[float]], *, kind: str, sep: str,
                    max_len: int) -> dict[str, np.ndarray]:
    """Padded arrays: tokens/valid (N, T); pos/label/mask (N, S).

    `labels[i]` is [correctness] for the ORM or the per-step labels for the PRM."""
    if kind not in KINDS:
        raise ValueError(f"reward model kind {kind!r}; expected one of {KINDS}")
    rows = []
    for q, t, lab in zip(queries, texts, labels):
        ids, ends = encode_one(tok, q, t, sep, max_len)
        if kind == "orm":
            pos, lab = [ends[-1]], [float(lab[0])]
        else:
            pos, lab = ends[:len(lab)], [float(x) for x in lab[:len(ends)]]
            if not lab:
                continue
        rows.append((ids, pos, lab, response_start(tok, q)))
    if not rows:
        raise ValueError("no reward-model examples")
    width = max(len(r[0]) for r in rows)
    steps = max(len(r[1]) for r in rows)
    n = len(rows)
    out = {"tokens": np.zeros((n, width), np.int32), "valid": np.zeros((n, width), bool),
           "pos": np.zeros((n, steps), np.int32), "label": np.zeros((n, steps), np.float32),
           "mask": np.zeros((n, steps), np.float32), "start": np.zeros((n,), np.int32)}
    for i, (ids, pos, lab, start) in enumerate(rows):
        out["start"][i] = min(start, width - 1)
        out["tokens"][i, :len(ids)] = ids
        out["valid"][i, :len(ids)] = True
        out["pos"][i, :len(pos)] = pos
        out["label"][i, :len(lab)] = lab
        out["mask"][i, :len(lab)] = 1.0
    return out


def lm_forward(cfg: LMConfig, lm_params: Any, tokens, valid) -> tuple[jax.Array, jax.Array]:
    """((B, T, D) final-LayerNorm outputs, (B, T, V) logits) of right-padded sequences."""
    positions = jnp.maximum(jnp.cumsum(valid.astype(jnp.int32), axis=1) - 1, 0)
    (logits, _), state = TransformerLM(cfg).apply(
        lm_params, tokens, positions, valid,
        capture_intermediates=lambda mdl, _: mdl.name == "ln_final", mutable=["intermediates"])
    return state["intermediates"]["ln_final"]["__call__"][0].astype(jnp.float32), logits


def hidden_states(cfg: LMConfig, lm_params: Any, tokens, valid) -> jax.Array:
    """(B, T, D) final-LayerNorm outputs of the LM (right-padded sequences)."""
    return lm_forward(cfg, lm_params, tokens, valid)[0]


def min_logprob_so_far(logits, tokens, start) -> jax.Array:
    """(B, T): c_t = max(-20, min_{start <= s <= t} log p(x_s | x_<s)); 0 before `start` (B,)."""
    logp = jax.nn.log_softmax(logits[:, :-1], axis=-1)
    tok_lp = jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1)[..., 0]     # (B, T-1)
    tok_lp = jnp.concatenate([jnp.zeros_like(tok_lp[:, :1]), tok_lp], axis=1)     # x_0: none
    t = jnp.arange(tokens.shape[1])[None]
    masked = jnp.where(t >= start[:, None], tok_lp, 0.0)
    return jnp.maximum(jax.lax.cummin(masked, axis=1), -20.0)


def readout_logits(cfg: LMConfig, params: Any, tokens, valid, pos, start=None) -> jax.Array:
    """(B, S) head logits r at the read-out positions `pos` (B, S)."""
    h, logits = lm_forward(cfg, params["lm"], tokens, valid)
    hs = jnp.take_along_axis(h, pos[..., None], axis=1)                 # (B, S, D)
    r = hs @ params["head"]["w"] + params["head"]["b"]
    if "a" in params["head"]:
        c = jnp.take_along_axis(min_logprob_so_far(logits, tokens, start), pos, axis=1)
        r = r + params["head"]["a"] * c
    return r


@functools.partial(jax.jit, static_argnames=("cfg",))
def _probs(params, tokens, valid, pos, start, *, cfg):
    return jax.nn.sigmoid(readout_logits(cfg, params, tokens, valid, pos, start))


class RewardModelJudge(ScoreJudge):
    """A trained ORM / PRM behind the judge interface (module docstring)."""

    def __init__(self, name: str, cfg: LMConfig, params: Any, tok: Tokenizer, *, kind: str,
                 sep: str, aggregation: str = "min", max_len: int | None = None,
                 batch_size: int = 64, seed: int = 0):
        super().__init__(name, seed)
        if kind not in KINDS:
            raise ValueError(f"reward model kind {kind!r}; expected one of {KINDS}")
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation {aggregation!r}; expected one of {AGGREGATIONS}")
        self.cfg, self.params, self.tok, self.kind, self.sep = cfg, params, tok, kind, sep
        self.aggregation, self.batch_size = aggregation, batch_size
        self.max_len = max_len or cfg.max_len

    def step_probs(self, query: Query, texts: Sequence[str]) -> list[np.ndarray]:
        """Per response: (S,) probabilities at its read-out positions."""
        enc = [encode_one(self.tok, query, t, self.sep, self.max_len) for t in texts]
        self._start = response_start(self.tok, query)
        if self.kind == "orm":
            enc = [(ids, ends[-1:]) for ids, ends in enc]
        out = []
        for start in range(0, len(enc), self.batch_size):
            chunk = enc[start:start + self.batch_size]
            width = -(-max(len(i) for i, _ in chunk) // 16) * 16
            width = min(max(width, max(len(i) for i, _ in chunk)), self.cfg.max_len)
            s = max(len(e) for _, e in chunk)
            rows = 1 << (len(chunk) - 1).bit_length()            # fewer compiles
            tokens = np.zeros((rows, width), np.int32)
            valid = np.zeros((rows, width), bool)
            pos = np.zeros((rows, s), np.int32)
            start = np.full((rows,), min(self._start, width - 1), np.int32)
            for i, (ids, ends) in enumerate(chunk):
                tokens[i, :len(ids)], valid[i, :len(ids)] = ids, True
                pos[i, :len(ends)] = ends
            valid[len(chunk):, 0] = True
            p = np.asarray(_probs(self.params, tokens, valid, pos, start, cfg=self.cfg))
            out += [p[i, :len(ends)] for i, (_, ends) in enumerate(chunk)]
        return out

    def scores(self, query, responses, partial):
        vals = []
        for p in self.step_probs(query, [r.text for r in responses]):
            if self.kind == "orm" or self.aggregation == "last":
                vals.append(float(p[-1]))
            elif self.aggregation == "min":
                vals.append(float(p.min()))
            else:
                vals.append(float(np.prod(p)))
        return np.asarray(vals)
