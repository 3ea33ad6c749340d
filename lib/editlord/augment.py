"""Renamed copies of training pairs: teaches a from-scratch editor to copy identifiers.

A pretrained code LM (what the paper fine-tunes) can already copy the names of an unseen
function; a small editor trained from scratch on ~200 pairs memorises the training
functions' names instead. `renamed(pair, seed)` renames the entry function's parameters
and local variables (every name bound in it: parameters, assignment / loop /
comprehension targets, lambda arguments) to random pronounceable identifiers, with ONE
mapping applied to both source and target, so the copy is again a correct edit of the
same kind (same injected rules; the pair's rules are name-independent patterns).

The random names are lower-case consonant-vowel syllables ("kavoru"), a vocabulary
disjoint from the evaluation's `perturb.rename` names ("val_37"), so the rename
perturbation stays unseen in training. Names used as keyword arguments, globals,
builtins, attributes and the function name are never renamed.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import keyword
import random

from lib.editlord.pairs import Pair

_C, _V = "bdfgklmnprstvz", "aeiou"


def _fn(tree: ast.Module) -> ast.FunctionDef:
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not fns:
        raise ValueError("no function to rename in")
    return fns[-1]


def _bound(fn: ast.FunctionDef) -> list[str]:
    out = []
    for n in ast.walk(fn):
        name = (n.arg if isinstance(n, ast.arg) else
                n.id if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) else None)
        if name and name not in out:
            out.append(name)
    return out


def _fresh(rng: random.Random, taken: set) -> str:
    while True:
        s = "".join(rng.choice(_C) + rng.choice(_V) for _ in range(rng.randint(2, 3)))
        if s not in taken and not keyword.iskeyword(s) and not hasattr(builtins, s):
            return s


def renamed(pair: Pair, seed: int) -> Pair | None:
    """A copy of `pair` with its function's bound names renamed consistently in source and
    target (module docstring); None when nothing can be renamed or the code has
    global / nonlocal declarations."""
    trees = [ast.parse(pair.source), ast.parse(pair.target)]
    fns = [_fn(t) for t in trees]
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for f in fns for n in ast.walk(f)):
        return None
    kw = {n.arg for t in trees for n in ast.walk(t) if isinstance(n, ast.keyword)}
    names = [n for n in dict.fromkeys(_bound(fns[0]) + _bound(fns[1]))
             if n not in kw and n != fns[0].name]
    if not names:
        return None
    rng = random.Random(seed)
    taken = {n.id for t in trees for n in ast.walk(t) if isinstance(n, ast.Name)} | set(names)
    mapping = {}
    for n in names:
        mapping[n] = _fresh(rng, taken)
        taken.add(mapping[n])
    for f in fns:
        for n in ast.walk(f):
            if isinstance(n, ast.Name) and n.id in mapping:
                n.id = mapping[n.id]
            elif isinstance(n, ast.arg) and n.arg in mapping:
                n.arg = mapping[n.arg]
    src, tgt = ast.unparse(trees[0]), ast.unparse(trees[1])
    return dataclasses.replace(pair, id=f"{pair.id}#r{seed}", source=src, target=tgt)
