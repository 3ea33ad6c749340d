"""Near-duplicate code across the train / held-out split (split hygiene).

HumanEval holds near-identical problems (e.g. HumanEval/56 and /61: the same bracket
counter with `<>` and `()`); an editor that has seen one "edits" the other by recall. Two
units are near-duplicates when the similarity of their *shape token* sequences is at
least a threshold:

    shape(code)   = Python tokens of the `ast.unparse` normal form, every identifier that
                    is not a keyword or builtin replaced by `_` (renaming is invisible),
                    constants and operators kept
    sim(a, b)     = max over both argument orders of difflib's ratio 2 M / (|a| + |b|),
                    M = tokens in difflib's matching blocks (1 = identical); difflib's
                    greedy matching is order-dependent, the max makes sim symmetric

`clusters` joins problems into connected components of the graph "sim >= threshold";
`split_clusters` puts whole components on one side, so no held-out problem has a
near-duplicate in training. `near_any` screens extra training code (the standard-library
corpus) against the held-out units.
"""
from __future__ import annotations

import ast
import builtins
import difflib
import io
import keyword
import random
import tokenize
from collections.abc import Sequence

_SKIP = {tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
         tokenize.ENDMARKER, tokenize.ENCODING}
_KEEP = set(keyword.kwlist) | set(dir(builtins))


def shape(code: str) -> tuple[str, ...]:
    """Shape tokens of `code` (module docstring); SyntaxError when it does not parse."""
    norm = ast.unparse(ast.parse(code))
    out = []
    for t in tokenize.generate_tokens(io.StringIO(norm).readline):
        if t.type in _SKIP:
            continue
        out.append("_" if t.type == tokenize.NAME and t.string not in _KEEP else t.string)
    return tuple(out)


def similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """Symmetric difflib ratio of two token sequences in [0, 1] (1: identical)."""
    if not a and not b:
        return 1.0
    return max(difflib.SequenceMatcher(None, x, y, autojunk=False).ratio()
               for x, y in ((a, b), (b, a)))


def _at_least(a, b, threshold: float) -> bool:
    """similarity(a, b) >= threshold, with difflib's cheap upper bounds checked first."""
    for x, y in ((a, b), (b, a)):
        m = difflib.SequenceMatcher(None, x, y, autojunk=False)
        if m.real_quick_ratio() < threshold or m.quick_ratio() < threshold:
            return False             # upper bounds, the same in both orders
        if m.ratio() >= threshold:
            return True
    return False


def clusters(shapes: dict[str, Sequence[str]], threshold: float) -> list[list[str]]:
    """Connected components (sorted lists of keys, sorted by first key) of the graph with an
    edge where `similarity >= threshold`; threshold > 1 gives singletons."""
    keys = sorted(shapes)
    parent = {k: k for k in keys}

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if root(a) != root(b) and _at_least(shapes[a], shapes[b], threshold):
                parent[root(b)] = root(a)
    comp: dict[str, list[str]] = {}
    for k in keys:
        comp.setdefault(root(k), []).append(k)
    return sorted(comp.values())


def split_clusters(comps: list[list[str]], test_fraction: float,
                   seed: int) -> tuple[set[str], set[str]]:
    """(train keys, held-out keys): whole components, shuffled with `seed`, go to the held-out
    side until it holds round(test_fraction * #keys) keys (at least one component)."""
    order = list(comps)
    random.Random(seed).shuffle(order)
    want = max(1, round(test_fraction * sum(len(c) for c in comps)))
    train, test = set(), set()
    for c in order:
        (test if not test or len(test) + len(c) <= want else train).update(c)
    return train, test


def near_any(s: Sequence[str], others: Sequence[Sequence[str]], threshold: float) -> bool:
    """Is `s` a near-duplicate (similarity >= threshold) of any of `others`?"""
    return any(_at_least(s, o, threshold) for o in others)
