"""Inductive rule learning: per-pair extraction, Algorithm 1 refinement, manifestation.

Every language-model step of the paper is one method of a `Backend`:

    extract(pair)          -> [Rule]   per-pair rules "switch from X to Y"
    spec(code)             -> dict     functional specification {problem_description, input, output}
    balanced(rule)         -> bool     neither too generic nor too specific
    similar(r, r_star)     -> bool
    merge(r, r_star)       -> Rule     r (+) r*
    reformat(rules)        -> [Rule]   concise, atomic, independent lines
    manifest(src, tgt, rules) -> [Rule]  rules whose X occurs in src (and Y in tgt)

`OfflineBackend` answers them without an LM (AST differences, frequencies, MiniLM
cosine); `lib/editlord/lm_backend.py` asks a served LM with the paper's prompt structure.

Algorithm 1 (algo.pdf, as the notes describe it; not the released scripts):

    R  <- union of extract(pair) over training pairs
    R' <- R
    repeat
        new <- []
        for r in R' then R (dedup, in order):
            if not balanced(r):                         PRUNE
            elif no r* in new with similar(r, r*):      ADD r
            else:                                       MERGE: new[r*] <- r (+) r*
            every `reformat_every` operations:          REFORMAT(new)
        new <- REFORMAT(new)
        if new == R': stop (converged)
        R' <- new
    until max_iters

It terminates (at most `max_iters` rounds) and, with the offline backend, a converged set
is a fixed point (refining it again returns it unchanged; tested).
"""
from __future__ import annotations

import abc
import dataclasses
import logging
import random
import re
from collections.abc import Sequence

import numpy as np

from lib.editlord import patterns, rulebook
from lib.editlord.pairs import Pair
from lib.editlord.rulebook import Rule

log = logging.getLogger(__name__)
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
MAX_RULES_PER_SAMPLE = 9


class Backend(abc.ABC):
    """The LM steps of rule learning (module docstring)."""

    @abc.abstractmethod
    def extract(self, pair: Pair) -> list[Rule]: ...

    @abc.abstractmethod
    def spec(self, code: str) -> dict: ...

    @abc.abstractmethod
    def balanced(self, rule: Rule) -> bool: ...

    @abc.abstractmethod
    def similar(self, a: Rule, b: Rule) -> bool: ...

    @abc.abstractmethod
    def merge(self, a: Rule, b: Rule) -> Rule: ...

    @abc.abstractmethod
    def reformat(self, rules: Sequence[Rule]) -> list[Rule]: ...

    @abc.abstractmethod
    def manifest(self, source: str, target: str | None, rules: Sequence[Rule]) -> list[Rule]: ...


# ----------------------------------------------------------------------------- offline


def applies(x: str, y: str, src_occ: dict, tgt_occ: dict | None) -> bool:
    """Manifestation test of one (X, Y) pattern pair: X occurs in the source and Y in the
    target (the paper's test), and the edit removed an X (X occurs fewer times in the
    target than in the source). Without a target (editing time): X occurs in the source."""
    if x not in src_occ:
        return False
    if tgt_occ is None:
        return True
    return y in tgt_occ and tgt_occ.get(x, 0) < src_occ[x]


def offline_spec(code: str) -> dict:
    """A functional specification read from the code itself (no LM): the function's name,
    its parameters and its return annotation."""
    import ast
    tree = ast.parse(code)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if not fns:
        raise ValueError("no function definition to describe")
    f = fns[-1]
    args = ", ".join(ast.unparse(a) for a in f.args.args)
    return {"problem_description": f.name.replace("_", " "), "input": args,
            "output": ast.unparse(f.returns) if f.returns else "value"}


@dataclasses.dataclass
class OfflineBackend(Backend):
    """AST-diff extraction, frequency balance, MiniLM similarity (notes, section A).

    pairs: the training pairs (support counts are over them).
    min_support: a rule manifesting on fewer pairs is too specific.
    max_fraction: a rule manifesting on more than this fraction of pairs, or a side that
      is a bare `_`, is too generic.
    tau: cosine threshold of the MiniLM embeddings of two rules' texts for "similar".
    encoder: `lib.lm.minilm.TextEncoder` (None: Jaccard similarity of word/symbol tokens,
      threshold `jaccard_tau`).
    """
    pairs: Sequence[Pair]
    min_support: int = 2
    max_fraction: float = 0.5
    tau: float = 0.9
    encoder: object = None
    jaccard_tau: float = 0.7

    def __post_init__(self):
        self._emb: dict[str, np.ndarray] = {}
        self._occ = [(patterns.occurrences(p.source), patterns.occurrences(p.target))
                     for p in self.pairs]

    def extract(self, pair: Pair) -> list[Rule]:
        return [rulebook.pattern_rule(x, y) for x, y in patterns.extract(pair.source, pair.target)]

    def spec(self, code: str) -> dict:
        return offline_spec(code)

    def manifests_on(self, rule: Rule) -> list[int]:
        """Indices of training pairs the rule manifests on (`applies`)."""
        keys = [(patterns.key(x), patterns.key(y)) for x, y in rule.alternatives]
        return [i for i, (s, t) in enumerate(self._occ)
                if any(applies(x, y, s, t) for x, y in keys)]

    def with_support(self, rule: Rule) -> Rule:
        return rule.with_(support=len(self.manifests_on(rule)))

    def balanced(self, rule: Rule) -> bool:
        if any(patterns.key(x) in ("_", "...") or patterns.key(y) in ("_", "...")
               or patterns.key(x) == patterns.key(y) for x, y in rule.alternatives):
            return False
        n = len(self.manifests_on(rule))
        return self.min_support <= n <= self.max_fraction * len(self.pairs)

    def _vec(self, text: str) -> np.ndarray:
        if text not in self._emb:
            self._emb[text] = np.asarray(self.encoder.encode([text])[0])
        return self._emb[text]

    def similarity(self, a: Rule, b: Rule) -> float:
        if self.encoder is not None:
            return float(self._vec(a.text) @ self._vec(b.text))
        ta, tb = set(_TOKEN_RE.findall(a.text)), set(_TOKEN_RE.findall(b.text))
        return len(ta & tb) / max(len(ta | tb), 1)

    def similar(self, a: Rule, b: Rule) -> bool:
        if set(a.alternatives) <= set(b.alternatives) or set(b.alternatives) <= set(a.alternatives):
            return True
        return self.similarity(a, b) >= (self.tau if self.encoder is not None else self.jaccard_tau)

    def merge(self, a: Rule, b: Rule) -> Rule:
        alts = tuple(dict.fromkeys(a.alternatives + b.alternatives))
        return Rule(a.text, alts, 0, a.id)

    def reformat(self, rules: Sequence[Rule]) -> list[Rule]:
        """Each rule's alternatives sorted by their own support (most first), its text the
        "switch from X to Y" of the first; rules sorted by support; ids R1, R2, ..."""
        out = []
        for r in rules:
            sup = {alt: len(self.manifests_on(Rule("", (alt,)))) for alt in r.alternatives}
            alts = tuple(sorted(r.alternatives, key=lambda a: (-sup[a], a)))
            out.append(Rule(rulebook.switch_text(*alts[0]), alts,
                            len(self.manifests_on(Rule("", alts)))))
        out.sort(key=lambda r: (-r.support, r.text))
        return [r.with_(id=f"R{i + 1}") for i, r in enumerate(out)]

    def manifest(self, source: str, target: str | None, rules: Sequence[Rule]) -> list[Rule]:
        s = patterns.occurrences(source)
        t = patterns.occurrences(target) if target is not None else None
        return [r for r in rules
                if any(applies(patterns.key(x), patterns.key(y), s, t) for x, y in r.alternatives)]


# ----------------------------------------------------------------------------- Algorithm 1


@dataclasses.dataclass
class RefineLog:
    iterations: int = 0
    converged: bool = False
    pruned: int = 0
    added: int = 0
    merged: int = 0
    reformats: int = 0
    sizes: list = dataclasses.field(default_factory=list)


def _same(a: Sequence[Rule], b: Sequence[Rule]) -> bool:
    return [(r.text, r.alternatives) for r in a] == [(r.text, r.alternatives) for r in b]


def refine(raw: Sequence[Rule], backend: Backend, *, max_iters: int = 10,
           reformat_every: int = 100, start: Sequence[Rule] | None = None
           ) -> tuple[list[Rule], RefineLog]:
    """Algorithm 1 (module docstring); (meta-rule set R', log)."""
    if max_iters < 1:
        raise ValueError(f"max_iters = {max_iters} must be >= 1")
    info = RefineLog()
    current = list(start) if start is not None else list(raw)
    ops = 0
    for it in range(max_iters):
        info.iterations = it + 1
        new: list[Rule] = []
        seen = set()
        for r in list(current) + list(raw):
            k = (r.text, r.alternatives)
            if k in seen:
                continue
            seen.add(k)
            ops += 1
            if not backend.balanced(r):
                info.pruned += 1
            else:
                j = next((j for j, s in enumerate(new) if backend.similar(r, s)), None)
                if j is None:
                    new.append(r)
                    info.added += 1
                else:
                    merged = backend.merge(new[j], r)
                    if (merged.text, merged.alternatives) != (new[j].text, new[j].alternatives):
                        info.merged += 1
                    new[j] = merged
            if reformat_every and ops % reformat_every == 0:
                new = backend.reformat(new)
                info.reformats += 1
        new = backend.reformat(new)
        info.reformats += 1
        info.sizes.append(len(new))
        if _same(new, current):
            info.converged = True
            return new, info
        current = new
    return current, info


def extract_all(pairs: Sequence[Pair], backend: Backend) -> tuple[list[Rule], dict]:
    """Per-pair extraction over the training pairs (deduplicated, in order); a pair whose
    extraction fails (does not parse, a malformed LM reply) is skipped, counted and logged."""
    out, seen, skipped = [], set(), {}
    for p in pairs:
        try:
            rules = backend.extract(p)
        except (SyntaxError, ValueError) as e:
            kind = type(e).__name__
            skipped[kind] = skipped.get(kind, 0) + 1
            log.warning("rule extraction skipped pair %s: %s", p.id, e)
            continue
        for r in rules:
            if (r.text, r.alternatives) not in seen:
                seen.add((r.text, r.alternatives))
                out.append(r)
    return out, skipped


def manifest_sample(backend: Backend, pair: Pair, rules: Sequence[Rule], *, seed: int = 0,
                    max_rules: int = MAX_RULES_PER_SAMPLE) -> list[Rule]:
    """Per-sample manifestation: at most `max_rules` (a seeded random subset) of the rules
    the backend finds, then restricted to rules whose X provably occurs in the source
    when the rule has code patterns (never attach an absent X)."""
    found = backend.manifest(pair.source, pair.target, rules)
    occ = None
    kept = []
    for r in found:
        try:
            if occ is None:
                occ = patterns.occurrences(pair.source)
            ok = any(patterns.key(x) in occ for x, _ in r.alternatives)
        except SyntaxError:
            ok = True            # a text rule (served LM): the LM's judgement stands
        if ok:
            kept.append(r)
    if len(kept) > max_rules:
        rng = random.Random(f"{seed}:{pair.id}")
        idx = sorted(rng.sample(range(len(kept)), max_rules))
        kept = [kept[i] for i in idx]
    return kept


# ----------------------------------------------------------------------------- recovery


def recovery(learned: Sequence[Rule], backend: OfflineBackend, *, purity: float = 0.8,
             coverage: float = 0.5, min_support: int = 3) -> dict:
    """Rule-recovery precision / recall against the injected library rules.

    S_L: training pairs a learned rule manifests on; S_r: pairs library rule r was injected
    into. A learned rule is *correct* when |S_L & S_r| / |S_L| >= purity for some r (it
    fires almost only where r was injected). A library rule with |S_r| >= min_support is
    *recovered* when the correct rules assigned to it cover |union S_L & S_r| / |S_r| >=
    coverage. precision = correct / learned, recall = recovered / eligible library rules.
    """
    from lib.editlord import library
    injected = {r.name: {i for i, p in enumerate(backend.pairs) if r.name in p.rules}
                for r in library.LIBRARY}
    eligible = [n for n, s in injected.items() if len(s) >= min_support]
    assigned: dict[str, set] = {n: set() for n in injected}
    per_rule = []
    correct = 0
    for L in learned:
        s = set(backend.manifests_on(L))
        best, best_p = None, 0.0
        for n, si in injected.items():
            p = len(s & si) / max(len(s), 1)
            if p > best_p:
                best, best_p = n, p
        ok = best_p >= purity and bool(s)
        correct += ok
        if ok:
            assigned[best] |= s & injected[best]
        per_rule.append({"id": L.id, "text": L.text, "support": len(s), "best_match": best,
                         "purity": best_p, "correct": ok})
    cover = {n: len(assigned[n]) / len(injected[n]) for n in eligible}
    recovered = [n for n in eligible if cover[n] >= coverage]
    return {"precision": correct / max(len(learned), 1),
            "recall": len(recovered) / max(len(eligible), 1),
            "num_learned": len(learned), "num_eligible": len(eligible),
            "recovered": recovered, "missed": [n for n in eligible if n not in recovered],
            "coverage": cover, "rules": per_rule,
            "injected_support": {n: len(s) for n, s in injected.items()}}
