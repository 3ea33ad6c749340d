"""Byte-level BPE tokenizer trained by the workspace, with special tokens for chat and tools.

Vocabulary layout (ids):

    0 .. 255                    the 256 bytes (so every string is encodable)
    256 .. 256 + M - 1          M learned merges (pairs of existing ids), in training order
    256 + M .. V - 1            special tokens, written `<|name|>` in text

With M = 0 this is a plain byte tokenizer. Special tokens are recognised in text only
when `encode(..., allow_special=True)`; a `<|name|>` there that the vocabulary does not
hold raises `ValueError` naming it (never silently split into bytes). Encoding splits
ordinary text into pre-tokens (runs of letters, digits, other symbols and whitespace,
GPT-2 style), so merges never cross those boundaries; each pre-token is merged by
merge rank (lowest first), exactly as in training.

The tokenizer is a small immutable object that saves to / loads from one JSON file
(`tokenizer.json` beside a checkpoint).
"""
from __future__ import annotations

import collections
import json
import re
from collections.abc import Iterable, Sequence

CHAT_SPECIAL_TOKENS = ("<|pad|>", "<|bos|>", "<|eos|>", "<|system|>", "<|user|>",
                       "<|assistant|>", "<|tool|>", "<|end|>", "<|tool_call|>",
                       "<|/tool_call|>")
_SPECIAL_RE = re.compile(r"<\|[^|<>\s]{1,40}\|>")
_PRETOKEN_RE = re.compile(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+")


def _pretokens(text: str) -> list[bytes]:
    """Split text into the chunks merges may not cross (digits stay single characters,
    which keeps arithmetic digit-aligned)."""
    return [m.group().encode("utf-8") for m in _PRETOKEN_RE.finditer(text)]


class Tokenizer:
    """Byte-level BPE with special tokens; see the module docstring for the id layout."""

    def __init__(self, merges: Sequence[tuple[int, int]] = (),
                 special_tokens: Sequence[str] = CHAT_SPECIAL_TOKENS):
        for s in special_tokens:
            if not _SPECIAL_RE.fullmatch(s):
                raise ValueError(f"special token {s!r} must look like '<|name|>'")
        if len(set(special_tokens)) != len(special_tokens):
            raise ValueError(f"special tokens repeat: {list(special_tokens)}")
        self.merges = tuple((int(a), int(b)) for a, b in merges)
        self._bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self._rank: dict[tuple[int, int], int] = {}
        for rank, (a, b) in enumerate(self.merges):
            if not (0 <= a < len(self._bytes) and 0 <= b < len(self._bytes)):
                raise ValueError(f"merge {rank} = ({a}, {b}) refers to an id not yet defined")
            self._rank[(a, b)] = rank
            self._bytes.append(self._bytes[a] + self._bytes[b])
        self.special_tokens = tuple(special_tokens)
        first = 256 + len(self.merges)
        self.special_ids = {s: first + i for i, s in enumerate(self.special_tokens)}
        self._special_by_id = {i: s for s, i in self.special_ids.items()}
        self.vocab_size = first + len(self.special_tokens)
        self._cache: dict[bytes, tuple[int, ...]] = {}

    # ------------------------------------------------------------------ ids of specials
    def special_id(self, name: str) -> int:
        """Id of a special token, e.g. `special_id("<|eos|>")`; ValueError if unknown."""
        if name not in self.special_ids:
            raise ValueError(f"unknown special token {name!r}; this tokenizer has "
                             f"{list(self.special_tokens)}")
        return self.special_ids[name]

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    @property
    def pad_id(self) -> int:
        return self.special_id("<|pad|>")

    @property
    def eos_id(self) -> int:
        return self.special_id("<|eos|>")

    # ------------------------------------------------------------------ encode / decode
    def _encode_chunk(self, chunk: bytes) -> tuple[int, ...]:
        hit = self._cache.get(chunk)
        if hit is not None:
            return hit
        ids = list(chunk)
        while len(ids) > 1:
            pairs = [(self._rank.get(p, None), i) for i, p in enumerate(zip(ids, ids[1:]))]
            best = min((r, i) for r, i in pairs if r is not None) if any(
                r is not None for r, _ in pairs) else None
            if best is None:
                break
            rank = best[0]
            a, b = self.merges[rank]
            out, i = [], 0
            while i < len(ids):
                if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                    out.append(256 + rank)
                    i += 2
                else:
                    out.append(ids[i])
                    i += 1
            ids = out
        if len(self._cache) < 200_000:
            self._cache[chunk] = tuple(ids)
        return tuple(ids)

    def _encode_plain(self, text: str) -> list[int]:
        out: list[int] = []
        for chunk in _pretokens(text):
            out.extend(self._encode_chunk(chunk))
        return out

    def encode(self, text: str, *, allow_special: bool = False) -> list[int]:
        """Token ids of `text`.

        allow_special=False: everything, including `<|...|>`, is ordinary text.
        allow_special=True: `<|name|>` becomes the special token's id; an unknown name
        raises ValueError (a typo in a chat template must not silently become bytes).
        """
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        if not allow_special:
            return self._encode_plain(text)
        out: list[int] = []
        pos = 0
        for m in _SPECIAL_RE.finditer(text):
            out.extend(self._encode_plain(text[pos:m.start()]))
            out.append(self.special_id(m.group()))
            pos = m.end()
        out.extend(self._encode_plain(text[pos:]))
        return out

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (a special token: its `<|name|>` text)."""
        if token_id in self._special_by_id:
            return self._special_by_id[token_id].encode()
        if not 0 <= token_id < len(self._bytes):
            raise ValueError(f"token id {token_id} is outside the vocabulary [0, {self.vocab_size})")
        return self._bytes[token_id]

    def decode(self, ids: Iterable[int], *, skip_special: bool = False) -> str:
        """Text of `ids`; invalid UTF-8 (a cut multi-byte character) becomes U+FFFD."""
        parts = [self.token_bytes(int(i)) for i in ids
                 if not (skip_special and int(i) in self._special_by_id)]
        return b"".join(parts).decode("utf-8", errors="replace")

    def token_text(self, token_id: int) -> str:
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        return {"kind": "byte_bpe", "merges": [list(m) for m in self.merges],
                "special_tokens": list(self.special_tokens)}

    @classmethod
    def from_dict(cls, d: dict) -> Tokenizer:
        if d.get("kind") != "byte_bpe":
            raise ValueError(f"not a byte-BPE tokenizer file (kind = {d.get('kind')!r})")
        return cls([tuple(m) for m in d["merges"]], d["special_tokens"])

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f)

    @classmethod
    def load(cls, path: str) -> Tokenizer:
        with open(path) as f:
            return cls.from_dict(json.load(f))

    def __eq__(self, other) -> bool:
        return isinstance(other, Tokenizer) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.merges, self.special_tokens))


def train_bpe(texts: Iterable[str], num_merges: int,
              special_tokens: Sequence[str] = CHAT_SPECIAL_TOKENS,
              min_count: int = 2) -> Tokenizer:
    """Learn up to `num_merges` byte-pair merges from `texts` (most frequent pair first).

    Pre-token counts are gathered once; each round merges the most frequent adjacent
    pair (ties: the smaller pair of ids, so training is deterministic) and stops early when
    no pair occurs `min_count` times. Special tokens in the texts are never merged.
    """
    if num_merges < 0:
        raise ValueError(f"num_merges = {num_merges} must be >= 0")
    counts: collections.Counter[tuple[int, ...]] = collections.Counter()
    for text in texts:
        for piece in _SPECIAL_RE.split(text):
            for chunk in _pretokens(piece):
                counts[tuple(chunk)] += 1
    words = {w: c for w, c in counts.items() if len(w) > 1}
    merges: list[tuple[int, int]] = []
    for _ in range(num_merges):
        pair_counts: collections.Counter[tuple[int, int]] = collections.Counter()
        for w, c in words.items():
            for p in zip(w, w[1:]):
                pair_counts[p] += c
        if not pair_counts:
            break
        best, best_count = min(pair_counts.items(), key=lambda kv: (-kv[1], kv[0]))
        if best_count < min_count:
            break
        new_id = 256 + len(merges)
        merges.append(best)
        new_words: dict[tuple[int, ...], int] = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            if len(out) > 1:
                new_words[tuple(out)] = new_words.get(tuple(out), 0) + c
        words = new_words
    return Tokenizer(merges, special_tokens)
