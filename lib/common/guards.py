"""Run guards: stop on NaN/Inf metrics, and catch SIGTERM for a clean preemption exit."""
from __future__ import annotations

import math
import signal
from typing import Any, Mapping

import numpy as np


class NonFiniteError(FloatingPointError):
    """A metric became NaN or Inf; the message names the step and the metric."""


def assert_finite(step: int, metrics: Mapping[str, Any], last_good: int | None = None) -> None:
    """Raise `NonFiniteError` if any metric is NaN/Inf at `step`."""
    for name, value in metrics.items():
        v = float(np.asarray(value))
        if not math.isfinite(v):
            where = (f"; the last good checkpoint is step {last_good}" if last_good is not None
                     else "; no checkpoint was written before it")
            raise NonFiniteError(f"metric '{name}' is {v} at step {step}{where}")


class PreemptionGuard:
    """Context manager: while active, SIGTERM sets `.requested` instead of killing.

    The train loop polls `.requested`, saves a checkpoint and returns; the previous
    handler is restored on exit.
    """

    def __init__(self, signals=(signal.SIGTERM,)):
        self.signals = signals
        self.requested = False
        self._old = {}

    def _handler(self, signum, frame):  # noqa: ARG002
        self.requested = True

    def __enter__(self):
        for s in self.signals:
            try:
                self._old[s] = signal.signal(s, self._handler)
            except ValueError:  # not the main thread (e.g. some notebook runners)
                pass
        return self

    def __exit__(self, *exc):
        for s, old in self._old.items():
            signal.signal(s, old)
        return False
