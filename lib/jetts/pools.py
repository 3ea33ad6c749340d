"""The generator outputs every protocol consumes: queries, response pools and step trees.

    q = Query("arith/17", "0347+0085", domain="arithmetic", meta={"a": 347, "b": 85})
    pool = Pool(q, [Response("...", score=1.0, greedy=True), Response("...", 0.0), ...])
    tree = Tree(q, nodes, n=4, m=2, depth=4)

* `Response.score` is the ground-truth quality in [0, 1] (1 = correct), computed by the
  domain (exact arithmetic, HumanEval tests, instruction checkers). Prompted judges and
  reward models never read it; the simulated and oracle judges do (that is their purpose).
* A `Pool` holds up to N responses; by convention `responses[0]` is the greedy one
  (JETTS: 1 greedy + 9 sampled at T = 1, top-p 0.95).
* A `Tree` is a precomputed step-level search tree (JETTS `{dataset}_{N}_{M}_{d}_{gen}`):
  node 0 is the root (empty prefix); the root has N children, every other non-leaf node at
  depth < d has M children of which the first is the greedy continuation. A node's `text`
  is the response prefix so far (steps joined by the domain's separator); `leaf` marks a
  finished response, whose `score` is its correctness; an inner node's `score` is the best
  leaf score below it (what an oracle judge would say about the prefix). `rollout` /
  `rollout_score` hold the greedy completion of the prefix (for look-ahead judging).

Everything round-trips through JSON (`save_*` / `load_*`), so pools and trees are built
once and reused by every judge and protocol (`stage_jsonl`: a JSONL stage of a run).
"""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from lib.toolbox import jsonl


@dataclasses.dataclass(frozen=True)
class Query:
    qid: str
    prompt: str                 # the user turn shown to generators and judges
    domain: str
    meta: dict = dataclasses.field(default_factory=dict, hash=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Response:
    text: str
    score: float                # ground truth in [0, 1]
    greedy: bool = False
    meta: dict = dataclasses.field(default_factory=dict, hash=False, compare=False)


@dataclasses.dataclass
class Pool:
    query: Query
    responses: list[Response]

    def __post_init__(self):
        if not self.responses:
            raise ValueError(f"pool of {self.query.qid!r} has no responses")

    @property
    def scores(self) -> list[float]:
        return [r.score for r in self.responses]

    @property
    def greedy_index(self) -> int:
        idx = [i for i, r in enumerate(self.responses) if r.greedy]
        if len(idx) != 1:
            raise ValueError(f"pool of {self.query.qid!r} has {len(idx)} greedy responses, "
                             "expected exactly 1")
        return idx[0]


@dataclasses.dataclass
class Node:
    parent: int                 # -1 for the root
    depth: int                  # 0 for the root
    text: str                   # response prefix (steps so far)
    children: list[int]
    leaf: bool
    score: float                # leaf: correctness; inner: best leaf score below
    greedy: bool = False        # the greedy child of its parent
    rollout: str = ""           # greedy completion of this prefix (look-ahead)
    rollout_score: float = 0.0


@dataclasses.dataclass
class Tree:
    query: Query
    nodes: list[Node]
    n: int
    m: int
    depth: int

    def __post_init__(self):
        if self.n < 1 or self.m < 1 or self.n % self.m:
            raise ValueError(f"tree of {self.query.qid!r}: N = {self.n} must be a positive "
                             f"multiple of M = {self.m}")
        if not self.nodes or self.nodes[0].parent != -1:
            raise ValueError(f"tree of {self.query.qid!r}: node 0 must be the root")

    def leaves(self) -> list[int]:
        return [i for i, nd in enumerate(self.nodes) if nd.leaf]

    def best_leaf_score(self) -> float:
        return max(self.nodes[i].score for i in self.leaves())

    def greedy_leaf(self) -> int:
        """The leaf reached by following greedy children from the root's first child."""
        i = self.nodes[0].children[0]
        while not self.nodes[i].leaf:
            i = next(c for c in self.nodes[i].children if self.nodes[c].greedy)
        return i


def propagate_scores(nodes: list[Node]) -> None:
    """Set every inner node's score to the best leaf score below it (in place)."""
    order = sorted(range(len(nodes)), key=lambda i: -nodes[i].depth)
    for i in order:
        nd = nodes[i]
        if not nd.leaf:
            if not nd.children:
                raise ValueError(f"inner node {i} (depth {nd.depth}) has no children")
            nd.score = max(nodes[c].score for c in nd.children)


# ----------------------------------------------------------------------------- JSON


def _query_json(q: Query) -> dict:
    return dataclasses.asdict(q)


def pool_to_json(p: Pool) -> dict:
    return {"query": _query_json(p.query), "responses": [dataclasses.asdict(r) for r in p.responses]}


def pool_from_json(d: dict) -> Pool:
    return Pool(Query(**d["query"]), [Response(**r) for r in d["responses"]])


def tree_to_json(t: Tree) -> dict:
    return {"query": _query_json(t.query), "n": t.n, "m": t.m, "depth": t.depth,
            "nodes": [dataclasses.asdict(nd) for nd in t.nodes]}


def tree_from_json(d: dict) -> Tree:
    return Tree(Query(**d["query"]), [Node(**nd) for nd in d["nodes"]], d["n"], d["m"], d["depth"])


def _write(path: str, items: Sequence[dict]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for it in items:
            f.write(json.dumps(it) + "\n")
    os.replace(tmp, path)


def _read(path: str, from_json: Callable[[dict], Any], what: str) -> list[Any]:
    """Every record of the JSONL file `path` through `from_json`; ValueError naming
    `path:line` for a line that is not JSON, not an object or not a `what` record."""
    out = []
    for where, record in jsonl.records(path):
        try:
            out.append(from_json(record))
        except KeyError as e:
            raise ValueError(f"{where}: not a {what} record (missing key {e.args[0]!r})") from None
        except (TypeError, AttributeError) as e:
            raise ValueError(f"{where}: not a {what} record ({e})") from None
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    return out


def save_pools(path: str, pools: Sequence[Pool]) -> None:
    _write(path, [pool_to_json(p) for p in pools])


def load_pools(path: str) -> list[Pool]:
    """The pools saved by `save_pools`; ValueError naming `path:line` for a bad line."""
    return _read(path, pool_from_json, "pool")


def save_trees(path: str, trees: Sequence[Tree]) -> None:
    _write(path, [tree_to_json(t) for t in trees])


def load_trees(path: str) -> list[Tree]:
    """The trees saved by `save_trees`; ValueError naming `path:line` for a bad line."""
    return _read(path, tree_from_json, "tree")


def save_rows(path: str, rows: Sequence[dict]) -> None:
    _write(path, rows)


def load_rows(path: str) -> list[dict]:
    """The JSON objects saved by `save_rows`; ValueError naming `path:line` for a bad line."""
    return _read(path, dict, "row")


def stage_jsonl(stages, name: str, make: Callable[[], list], save, load, *,
                identity: dict | None = None) -> tuple[list, bool]:
    """(items, reused): the items of stage `name` of a `lib.common.stages.Stages`, kept in
    `<root>/<name>.jsonl` beside the stage's result: made by `make()` and written by
    `save(path, items)` once, read by `load(path)` on every later run. A file left by a run
    from before stages (no stage result yet) is reused as it is."""
    path = stages.result_path(name)[:-len(".json")] + ".jsonl"
    made = []

    def build(_):
        if not os.path.exists(path):
            made.append(make())
            from lib.common import mesh as mesh_lib
            if mesh_lib.is_primary():
                save(path, made[0])
        return {"file": os.path.basename(path)}

    stages.run(name, build, identity=identity)
    return (made[0], False) if made else (load(path), True)
