"""Padded batches of marked event sequences, and the checks that name a bad sequence.

A batch of B sequences on windows [0, T_b] is stored as

    times  (B, L) float32   event times, sorted within each row; padding is +T_b
    marks  (B, L) int32     mark in {0, ..., K-1}; padding is 0
    mask   (B, L) bool      True for real events (a prefix of each row)
    t_max  (B,)   float32   end of the observation window T_b

so that every model, score and baseline is a `jax.vmap` over rows with masked sums.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import jax.numpy as jnp
import numpy as np


class Events(NamedTuple):
    times: jnp.ndarray
    marks: jnp.ndarray
    mask: jnp.ndarray
    t_max: jnp.ndarray

    @property
    def num_sequences(self) -> int:
        return int(self.times.shape[0])

    @property
    def counts(self) -> jnp.ndarray:
        """Number of events per sequence, (B,)."""
        return self.mask.sum(axis=-1)


class SequenceError(ValueError):
    """An input event sequence that CADES cannot use (the message names it)."""


def check_sequence(name: str, times, marks, t_max: float, num_marks: int) -> None:
    """Raise `SequenceError` naming `name` when the sequence is not usable.

    Checks: at least one event, finite non-negative times, sorted (non-decreasing) times,
    times <= t_max, integer marks in [0, num_marks), one mark per event.
    """
    times = np.asarray(times, dtype=np.float64)
    if times.ndim != 1:
        raise SequenceError(f"sequence {name}: times must be a flat list, got shape {times.shape}")
    if times.size == 0:
        raise SequenceError(f"sequence {name}: empty sequence (no events); every sequence needs "
                            "at least one event")
    if not np.all(np.isfinite(times)):
        raise SequenceError(f"sequence {name}: times contain NaN or inf")
    if not (np.isfinite(t_max) and t_max > 0):
        raise SequenceError(f"sequence {name}: t_max = {t_max!r} must be a positive number")
    if times.min() < 0:
        i = int(np.argmin(times))
        raise SequenceError(f"sequence {name}: negative time {float(times[i])!r} at event {i}")
    bad = np.nonzero(np.diff(times) < 0)[0]
    if bad.size:
        i = int(bad[0])
        raise SequenceError(f"sequence {name}: times are not sorted (event {i} at "
                            f"{float(times[i])!r} comes before event {i + 1} at "
                            f"{float(times[i + 1])!r})")
    if times.max() > t_max:
        raise SequenceError(f"sequence {name}: time {float(times.max())!r} exceeds t_max = "
                            f"{float(t_max)!r}")
    if marks is None:
        return
    marks_arr = np.asarray(marks)
    if marks_arr.shape != times.shape:
        raise SequenceError(f"sequence {name}: {marks_arr.size} marks for {times.size} events")
    if marks_arr.size and not np.all(np.equal(np.mod(marks_arr, 1), 0)):
        raise SequenceError(f"sequence {name}: marks must be integers")
    out = (marks_arr < 0) | (marks_arr >= num_marks)
    if np.any(out):
        i = int(np.nonzero(out)[0][0])
        bad_mark = marks_arr[i].item()
        bad_mark = int(bad_mark) if float(bad_mark).is_integer() else bad_mark
        raise SequenceError(f"sequence {name}: mark {bad_mark!r} at event {i} is out of range "
                            f"[0, {num_marks - 1}] (num_marks = {num_marks})")


def from_lists(times: Sequence, marks: Sequence | None, t_max, num_marks: int = 1,
               names: Sequence[str] | None = None, max_len: int | None = None) -> Events:
    """Check and pad lists of sequences into an `Events` batch.

    times: B lists of event times; marks: B lists of int marks (None: all mark 0);
    t_max: a float or B floats. Raises `SequenceError` naming the first bad sequence.
    """
    n = len(times)
    if n == 0:
        raise SequenceError("no sequences given")
    names = list(names) if names is not None else [f"#{i}" for i in range(n)]
    t_max = np.broadcast_to(np.asarray(t_max, dtype=np.float64), (n,))
    for i in range(n):
        check_sequence(names[i], times[i], None if marks is None else marks[i], float(t_max[i]),
                       num_marks)
    longest = max(len(t) for t in times)
    max_len = max_len or longest
    if longest > max_len:
        raise SequenceError(f"a sequence has {longest} events, more than max_len = {max_len}")
    tt = np.repeat(t_max[:, None], max_len, axis=1).astype(np.float32)
    mm = np.zeros((n, max_len), np.int32)
    mask = np.zeros((n, max_len), bool)
    for i, t in enumerate(times):
        tt[i, :len(t)] = t
        mask[i, :len(t)] = True
        if marks is not None:
            mm[i, :len(t)] = np.asarray(marks[i], dtype=np.int64)
    return Events(jnp.asarray(tt), jnp.asarray(mm), jnp.asarray(mask),
                  jnp.asarray(t_max, jnp.float32))


def to_lists(ev: Events) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The inverse of `from_lists`: (times list, marks list) without padding."""
    times, marks, mask = (np.asarray(a) for a in (ev.times, ev.marks, ev.mask))
    return ([times[i][mask[i]] for i in range(len(times))],
            [marks[i][mask[i]] for i in range(len(times))])


def compact(times: jnp.ndarray, marks: jnp.ndarray, keep: jnp.ndarray, t_max,
            max_len: int) -> Events:
    """Rows of candidate events with a `keep` flag -> a sorted, left-packed `Events` batch.

    times/marks/keep: (..., M) with any order; keeps the first `max_len` kept events in
    time order. Works under vmap/jit (a sort, no dynamic shapes).
    """
    t_max = jnp.asarray(t_max, jnp.float32)
    t_pad = jnp.broadcast_to(t_max[..., None], times.shape)
    key = jnp.where(keep, times, jnp.inf)
    order = jnp.argsort(key, axis=-1)[..., :max_len]
    kept = jnp.take_along_axis(keep, order, axis=-1)
    t = jnp.where(kept, jnp.take_along_axis(times, order, axis=-1),
                  jnp.take_along_axis(t_pad, order, axis=-1))
    m = jnp.where(kept, jnp.take_along_axis(marks, order, axis=-1), 0)
    return Events(t.astype(jnp.float32), m.astype(jnp.int32), kept, t_max)


def on_host(ev: Events) -> Events:
    """`ev` as NumPy arrays: slicing, trimming and padding it are then NumPy operations, not
    JAX operations outside a jit that each compile once per batch and sequence length."""
    return type(ev)(*(np.asarray(a) for a in ev))


def trim(ev: Events, multiple: int = 64) -> Events:
    """Drop padding columns beyond the longest row (rounded up to `multiple`, so that jitted
    consumers see few distinct shapes)."""
    longest = int(np.asarray(ev.mask.sum(-1)).max()) if ev.times.shape[0] else 0
    L = min(ev.times.shape[1], max(multiple, -(-longest // multiple) * multiple))
    return Events(ev.times[:, :L], ev.marks[:, :L], ev.mask[:, :L], ev.t_max)
