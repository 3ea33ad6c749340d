"""Generator outputs: response pools (1 greedy + N-1 sampled) and step-level beam trees.

    sampler = LocalSampler(LocalLM.from_workdir(...))       # batched, in-process
    sampler = ClientSampler(OpenAIClient(url, model))       # any served model
    pools = make_pools(sampler, queries, grade, num_sampled=9)          # JETTS: T=1, top-p .95
    trees = make_trees(sampler, queries, grade, n=4, m=2, depth=4, sep=" ",
                       is_final=lambda step: step.startswith("="))

A `Sampler` continues (query, assistant prefix) pairs: `sample(queries, prefixes, n=...,
temperature=..., top_p=..., max_tokens=..., stop_at=...)` -> per pair, n (text,
finish_reason). With `stop_at` (the domain's step separator) generation ends after one
step. Neither a served model nor our sampler says *which* stop ended a step (end of turn
or the separator: both are finish_reason "stop"), so the domain's `is_final(step)` tells
whether a step finished the response; a step cut by `max_tokens` ("length") or at depth d
also ends it.

Trees (JETTS `jetts/data/tree.py`): the root's N children are 1 greedy + N-1 sampled first
steps; every inner node below gets 1 greedy + M-1 sampled next steps, to depth d (a full
tree, so any beam search can be replayed on it). Greedy decoding is deterministic, so a
node's greedy rollout (look-ahead) is the path of greedy children below it; it is stored
on the node. Leaves are graded by `grade(query, text)`, inner nodes get the best leaf score
below them (pools.propagate_scores).

`ClientSampler` continues a prefix through the completions endpoint with the prompt
rendered by `template(query)` (default: the workspace chat template, lib/lm/chat.py); for
a served model pass its own chat template. Pools use the chat endpoint.
"""
from __future__ import annotations

import abc
from collections.abc import Callable, Sequence

import jax

from lib.jetts.pools import Node, Pool, Query, Response, Tree, propagate_scores
from lib.lm import chat, sampling
from lib.lm.client import LanguageModel
from lib.lm.local import LocalLM

Grader = Callable[[Query, str], float]
Sample = tuple[str, str]          # (text, finish_reason)


def local_template(q: Query) -> str:
    return chat.render_chat([{"role": "user", "content": q.prompt}])


class Sampler(abc.ABC):
    @abc.abstractmethod
    def sample(self, queries: Sequence[Query], prefixes: Sequence[str], *, n: int,
               temperature: float, top_p: float, max_tokens: int, stop_at: str | None,
               seed: int) -> list[list[Sample]]:
        """n continuations of each (query, prefix)."""


class LocalSampler(Sampler):
    """Batched sampling from a `LocalLM` (lib/lm/sampling.py), `max_rows` rows per call."""

    def __init__(self, lm: LocalLM, max_rows: int = 256):
        self.lm, self.max_rows = lm, max_rows

    def sample(self, queries, prefixes, *, n, temperature, top_p, max_tokens, stop_at, seed):
        tok = self.lm.tok
        stops = list(self.lm._stop_ids)
        if stop_at is not None:
            ids = tok.encode(stop_at)
            if len(ids) != 1:
                raise ValueError(f"step separator {stop_at!r} must be one token, got {ids}")
            stops.append(ids[0])
        prompts = [tok.encode(local_template(q) + p, allow_special=True)
                   for q, p in zip(queries, prefixes)]
        per = max(1, self.max_rows // n)
        out: list[list[Sample]] = []
        key = jax.random.key(seed)
        for c, start in enumerate(range(0, len(prompts), per)):
            res = sampling.generate(self.lm.cfg, self.lm.params, prompts[start:start + per],
                                    key=jax.random.fold_in(key, c), n=n, max_tokens=max_tokens,
                                    temperature=temperature, top_p=top_p, stop_ids=stops)
            out += [[(tok.decode(s.tokens), s.finish_reason) for s in row] for row in res]
        return out


class ClientSampler(Sampler):
    """Any `LanguageModel` (e.g. an `OpenAIClient` pointed at vLLM / SGLang)."""

    def __init__(self, lm: LanguageModel, template: Callable[[Query], str] = local_template):
        self.lm, self.template = lm, template

    def sample(self, queries, prefixes, *, n, temperature, top_p, max_tokens, stop_at, seed):
        out = []
        for q, p in zip(queries, prefixes):
            if not p and stop_at is None:
                r = self.lm.chat([{"role": "user", "content": q.prompt}], n=n,
                                 temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                                 seed=seed)
            else:
                r = self.lm.complete(self.template(q) + p, n=n, temperature=temperature,
                                     top_p=top_p, max_tokens=max_tokens,
                                     stop=[stop_at] if stop_at else None, seed=seed)
            out.append([(c.text, c.finish_reason) for c in r.choices])
        return out


def make_pools(sampler: Sampler, queries: Sequence[Query], grade: Grader, *,
               num_sampled: int = 9, temperature: float = 1.0, top_p: float = 0.95,
               max_tokens: int = 512, seed: int = 0) -> list[Pool]:
    """One pool per query: the greedy response first, then `num_sampled` samples."""
    empty = [""] * len(queries)
    greedy = sampler.sample(queries, empty, n=1, temperature=0.0, top_p=1.0,
                            max_tokens=max_tokens, stop_at=None, seed=seed)
    sampled = (sampler.sample(queries, empty, n=num_sampled, temperature=temperature,
                              top_p=top_p, max_tokens=max_tokens, stop_at=None, seed=seed + 1)
               if num_sampled else [[] for _ in queries])
    pools = []
    for q, g, s in zip(queries, greedy, sampled):
        texts = [g[0][0]] + [t for t, _ in s]
        pools.append(Pool(q, [Response(t, grade(q, t), greedy=(i == 0))
                              for i, t in enumerate(texts)]))
    return pools


def make_trees(sampler: Sampler, queries: Sequence[Query], grade: Grader, *, n: int, m: int,
               depth: int, sep: str, is_final: Callable[[str], bool],
               step_max_tokens: int = 64, temperature: float = 1.0, top_p: float = 0.95,
               seed: int = 0) -> list[Tree]:
    """Full step trees (module docstring); all queries' frontiers are sampled together."""
    if n < 1 or m < 1 or n % m or depth < 1:
        raise ValueError(f"need N a positive multiple of M and depth >= 1; got N = {n}, "
                         f"M = {m}, d = {depth}")
    all_nodes = [[Node(-1, 0, "", [], False, 0.0)] for _ in queries]
    frontier = [(qi, 0) for qi in range(len(queries))]
    level = 0
    while frontier:
        width = n if level == 0 else m
        qs = [queries[qi] for qi, _ in frontier]
        prefixes = [all_nodes[qi][i].text + (sep if all_nodes[qi][i].text else "")
                    for qi, i in frontier]
        kw = dict(max_tokens=step_max_tokens, stop_at=sep)
        g = sampler.sample(qs, prefixes, n=1, temperature=0.0, top_p=1.0,
                           seed=seed + 2 * level, **kw)
        s = (sampler.sample(qs, prefixes, n=width - 1, temperature=temperature, top_p=top_p,
                            seed=seed + 2 * level + 1, **kw) if width > 1
             else [[] for _ in frontier])
        nxt = []
        for (qi, i), pre, gs, ss in zip(frontier, prefixes, g, s):
            nodes = all_nodes[qi]
            for k, (step, reason) in enumerate(gs + ss):
                step = step.strip()
                d = nodes[i].depth + 1
                leaf = d >= depth or reason == "length" or is_final(step)
                text = pre + step
                nodes.append(Node(i, d, text, [], leaf,
                                  grade(queries[qi], text) if leaf else 0.0, greedy=(k == 0)))
                nodes[i].children.append(len(nodes) - 1)
                if not leaf:
                    nxt.append((qi, len(nodes) - 1))
        frontier = nxt
        level += 1
    trees = []
    for q, nodes in zip(queries, all_nodes):
        propagate_scores(nodes)
        for nd in nodes:
            j = nd
            while not j.leaf:
                j = nodes[next(c for c in j.children if nodes[c].greedy)]
            nd.rollout, nd.rollout_score = j.text, j.score
        trees.append(Tree(q, nodes, n, m, depth))
    return trees
