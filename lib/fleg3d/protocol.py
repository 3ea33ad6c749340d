"""Few-shot class-incremental protocol: sessions, what each session may see, and the metrics.

A *bank* holds every cloud of one protocol (rows of points / descriptors / labels); a
`Protocol` is index arrays into it:
  base_train            the base session's full training set (classes 0..B-1)
  pools[c]              the candidate shots of new class c (disjoint from every test set)
  tests[s]              the test clouds of the classes introduced in session s
Session 0 is the base session; session s ≥ 1 adds `ways` new classes with `shots` shots
each, drawn from `pools` by (seed, repeat, class). `run` hands a method the sessions one
at a time — `learn(state, session)` sees only that session's support rows — and after
session s evaluates on the union of tests[0..s] only, so no method ever touches test data,
nor data of a later session (tested with a recording method).

Metrics after session s (class-balanced test sets, so plain accuracy is the class mean):
  A_s        accuracy over all classes seen so far
  A_old      accuracy on the base classes' test clouds, A_new on the new classes' (s ≥ 1)
  A_h        harmonic accuracy 2·A_old·A_new / (A_old + A_new)
  Δ          relative accuracy drop (A_0 - A_last) / A_0 · 100
"""
from __future__ import annotations

import zlib
from typing import Any, NamedTuple, Protocol as TypingProtocol

import numpy as np


class Session(NamedTuple):
    index: int
    classes: tuple[int, ...]        # classes introduced in this session
    support: np.ndarray             # bank rows the method may learn from
    labels: np.ndarray              # their labels


class Protocol(NamedTuple):
    name: str
    labels: np.ndarray              # (M,) bank labels
    session_classes: tuple[tuple[int, ...], ...]
    base_train: np.ndarray
    pools: dict[int, np.ndarray]
    tests: tuple[np.ndarray, ...]


class Method(TypingProtocol):
    def init(self) -> Any: ...
    def learn(self, state: Any, session: Session) -> Any: ...
    def predict(self, state: Any, rows: np.ndarray, seen: tuple[int, ...]) -> np.ndarray: ...


def session_classes(num_classes: int, base: int, ways: int) -> tuple[tuple[int, ...], ...]:
    """((0..B-1), (B..B+W-1), ...): the class ids introduced per session."""
    if base < 1 or ways < 1 or (num_classes - base) % ways or num_classes <= base:
        raise ValueError(f"{num_classes} classes cannot be split into {base} base classes and "
                         f"sessions of {ways} new classes")
    return (tuple(range(base)),) + tuple(tuple(range(b, b + ways))
                                         for b in range(base, num_classes, ways))


def check_disjoint(protocol: Protocol) -> None:
    """ValueError when a training or pool row is also a test row, or rows carry the wrong class."""
    test = np.concatenate(protocol.tests)
    train = np.concatenate([protocol.base_train] + list(protocol.pools.values()))
    if np.intersect1d(test, train).size:
        raise ValueError("training/support rows overlap test rows")
    for s, classes in enumerate(protocol.session_classes):
        if not set(np.unique(protocol.labels[protocol.tests[s]])) <= set(classes):
            raise ValueError(f"tests[{s}] holds classes outside session {s}")


def sessions(protocol: Protocol, shots: int, seed: int, repeat: int) -> list[Session]:
    """The sessions of one repeat: the base set, then `shots` random pool rows per class."""
    out = [Session(0, protocol.session_classes[0], protocol.base_train,
                   protocol.labels[protocol.base_train])]
    for s, classes in enumerate(protocol.session_classes[1:], start=1):
        rows = []
        for c in classes:
            pool = protocol.pools[c]
            if len(pool) < shots:
                raise ValueError(f"class {c} has {len(pool)} pool clouds, fewer than {shots} shots")
            rng = np.random.default_rng([seed, repeat, c, zlib.crc32(protocol.name.encode())])
            rows.append(rng.choice(pool, size=shots, replace=False))
        rows = np.concatenate(rows)
        out.append(Session(s, classes, rows, protocol.labels[rows]))
    return out


def harmonic(a_old: float, a_new: float) -> float:
    return 0.0 if a_old + a_new == 0 else 2 * a_old * a_new / (a_old + a_new)


def run(protocol: Protocol, method: Method, *, shots: int, seed: int, repeat: int) -> dict:
    """Per-session metrics of `method` for one repeat: lists acc, acc_old, acc_new, harmonic
    (acc_new and harmonic are None for the base session)."""
    base = set(protocol.session_classes[0])
    state = method.init()
    seen: tuple[int, ...] = ()
    res = {"acc": [], "acc_old": [], "acc_new": [], "harmonic": []}
    for sess in sessions(protocol, shots, seed, repeat):
        state = method.learn(state, sess)
        seen = seen + sess.classes
        rows = np.concatenate(protocol.tests[:sess.index + 1])
        true = protocol.labels[rows]
        pred = np.asarray(method.predict(state, rows, seen))
        if not set(np.unique(pred)) <= set(seen):
            raise ValueError("a method predicted a class it has not seen yet")
        ok = pred == true
        old = np.isin(true, list(base))
        res["acc"].append(float(ok.mean()))
        res["acc_old"].append(float(ok[old].mean()))
        if sess.index == 0:
            res["acc_new"].append(None)
            res["harmonic"].append(None)
        else:
            a_new = float(ok[~old].mean())
            res["acc_new"].append(a_new)
            res["harmonic"].append(harmonic(res["acc_old"][-1], a_new))
    return res


def summarise(runs: list[dict]) -> dict:
    """Mean over repeats per session, plus last-session accuracy, Δ and harmonic accuracy."""
    out = {}
    for key in ("acc", "acc_old", "acc_new", "harmonic"):
        cols = list(zip(*[r[key] for r in runs]))
        out[key] = [None if col[0] is None else float(np.mean(col)) for col in cols]
    out["acc_std"] = [float(np.std(col)) for col in zip(*[r["acc"] for r in runs])]
    out["last_acc"] = out["acc"][-1]
    out["last_harmonic"] = out["harmonic"][-1]
    out["drop"] = (out["acc"][0] - out["acc"][-1]) / max(out["acc"][0], 1e-12) * 100
    h = [x for x in out["harmonic"] if x is not None]
    out["mean_harmonic"] = float(np.mean(h)) if h else None
    out["mean_acc"] = float(np.mean(out["acc"]))
    return out
