"""Divergence guard for the CADES model fits (neural TPP on the train loop, Hawkes MLE).

A fit has diverged when its training loss rises far above where it started:

    loss > initial + RISE_FACTOR · max(|initial|, 1)        (or loss is NaN/Inf)

`initial` is the loss of the initial parameters on the whole training set (for the Hawkes
MLE the first entry of its loss history, which is exactly that). The losses here are
negative log-likelihoods per unit of time, which may be negative or near zero, so the
rise is measured against the starting magnitude, at least 1 (a ratio `loss / initial`
would mean nothing below zero). With RISE_FACTOR = 1e3 a converging or merely noisy fit
never comes near it (the tiny and quick runs stay below 2 × their start); a learning rate
of 1 on the neural TPP logs 3.5e7 in its first 5 steps against a start of 0.93, and the
run this guard was written for reached 8e11 (on the tiny run's data a learning rate of 1
only reaches 40 × its start: high, but not counted as divergence).

A diverged fit raises `DivergenceError` naming the fit, the step and the loss, so the
experiment stops before anything is evaluated or written: no results.json. For the neural
TPP, `LogGuard` is the train loop's `on_log` hook: it reads the row the loop has just
written to metrics.jsonl (on process 0; the verdict is broadcast to every process), so a
diverged state never reaches a later checkpoint and the error comes at the first logged
step past the threshold. (The check is generic; it lives here because lib/common/guards.py
belongs to the harness.)
"""
from __future__ import annotations

import json
import math
import os
from typing import Sequence

import jax
import numpy as np

from lib.common import guards

RISE_FACTOR = 1e3


class DivergenceError(guards.Diverged):
    """A training loss rose far above its starting value (see the module docstring); like
    every `guards.Diverged`, `cli.run` ends the run with its message as one line, exit 2."""


def threshold(initial: float, factor: float | None = None) -> float:
    """The loss above which a fit that started at `initial` has diverged (factor: default
    `RISE_FACTOR`, read at call time)."""
    factor = RISE_FACTOR if factor is None else factor
    return initial + factor * max(abs(initial), 1.0)


def check_loss(what: str, step: int, loss: float, initial: float, hint: str = "",
               factor: float | None = None) -> None:
    """Raise `DivergenceError` if `loss` at `step` is non-finite or above `threshold(initial)`."""
    factor = RISE_FACTOR if factor is None else factor
    if math.isfinite(loss) and loss <= threshold(initial, factor):
        return
    raise DivergenceError(
        f"{what} diverged: training loss {loss:.4g} at step {step}, started at {initial:.4g} "
        f"(limit {threshold(initial, factor):.4g} = start + {factor:g} x max(|start|, 1)); "
        f"nothing was written{'; ' + hint if hint else ''}")


def check_history(what: str, losses: Sequence[float], hint: str = "",
                  factor: float | None = None) -> None:
    """`check_loss` on a whole loss history; `losses[i]` is the loss at step i (after i
    updates), `losses[0]` the start. Raises at the first diverged step."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.size == 0:
        return
    bad = ~np.isfinite(losses) | (losses > threshold(float(losses[0]), factor))
    if bad.any():
        i = int(np.argmax(bad))
        check_loss(what, i, float(losses[i]), float(losses[0]), hint, factor)


def _last_row(path: str) -> dict | None:
    """The last complete JSON line of `path` (read from its end), or None."""
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 65536))
        lines = [ln for ln in f.read().split(b"\n") if ln.strip()]
    for line in reversed(lines):
        try:
            return json.loads(line)
        except json.JSONDecodeError:       # the first, partial line of the block
            continue
    return None


class LogGuard:
    """`train_loop.train(..., on_log=LogGuard(...))`: checks each logged training loss.

    metrics_path: the run's metrics.jsonl; metric: the loss key in it; initial: the loss
    of the initial parameters; primary: whether this process writes metrics.jsonl.
    """

    def __init__(self, what: str, metrics_path: str, metric: str, initial: float,
                 primary: bool = True, hint: str = "", factor: float | None = None):
        self.what, self.path, self.metric = what, metrics_path, metric
        self.initial, self.primary, self.hint, self.factor = initial, primary, hint, factor

    def _logged(self, step: int) -> float:
        """The metric's value in the row of `step` (process 0 reads it, every process gets it)."""
        value = 0.0
        if self.primary:
            row = _last_row(self.path)
            if not row or row.get("step") != step or self.metric not in row:
                raise RuntimeError(f"{self.path}: the last row is not the '{self.metric}' of step {step}")
            value = float(row[self.metric])
        if jax.process_count() > 1:
            from jax.experimental import multihost_utils
            value = float(multihost_utils.broadcast_one_to_all(np.float64(value)))
        return value

    def __call__(self, step: int) -> None:
        check_loss(self.what, step, self._logged(step), self.initial, self.hint, self.factor)
