"""Run guards: stop on NaN/Inf metrics, and the one preemption mechanism.

Preemption (SIGTERM) has one meaning everywhere: stop, keep what is saved, publish nothing
new, and exit 0 so that the same command resumes.

* `Preempted` is the exception that carries it. `lib.common.cli.run` turns it into exit 0
  with one log line naming what was saved. It derives from `BaseException` so that a broad
  `except Exception` (a restore fallback, a metric helper) never swallows it.
* `install_preemption_handler()` (called by `cli.run`) makes the first SIGTERM raise
  `Preempted` in the main thread wherever the program is (evaluation, between stages),
  unless a `PreemptionGuard` is active: inside `train_loop.train` SIGTERM only sets a flag,
  the loop finishes its step, saves a checkpoint of exactly the completed steps and then
  raises `Preempted` itself (naming the step and the checkpoint folder). A later SIGTERM
  while the first is unwinding is ignored, so it cannot cut the clean exit short.
* `check_preempted(what)` raises `Preempted` if SIGTERM was seen at any time in this
  process: call it before starting a stage or publishing a result. `train` calls it on
  entry, so no training starts after a preemption.
* An experiment never catches `Preempted` and never writes results on its way out; results
  are written with `workdir.write_json_atomic` / `write_text_atomic`, so a SIGTERM leaves
  either the old file or the new one, never half of one.
"""
from __future__ import annotations

import math
import signal
from typing import Any, Mapping

import numpy as np


class Diverged(FloatingPointError):
    """Training stopped because it diverged (a metric became NaN/Inf, or a paper's own
    divergence test fired); the message names the step and the metric. `lib.common.cli.run`
    prints it as one line on stderr and exits 2. A paper's divergence error derives from it."""


class NonFiniteError(Diverged):
    """A metric became NaN or Inf; the message names the step and the metric."""


def assert_finite(step: int, metrics: Mapping[str, Any], last_good: int | None = None) -> None:
    """Raise `NonFiniteError` if any metric is NaN/Inf at `step`."""
    for name, value in metrics.items():
        v = float(np.asarray(value))
        if not math.isfinite(v):
            where = (f"; the last good checkpoint is step {last_good}" if last_good is not None
                     else "; no checkpoint was written before it")
            raise NonFiniteError(f"metric '{name}' is {v} at step {step}{where}")


class Preempted(BaseException):
    """SIGTERM asked the run to stop; everything saved so far is kept, nothing new is
    published. The message says what was saved; `cli.run` exits 0 on it."""


_SEEN = False          # SIGTERM was received at some point in this process


def preemption_seen() -> bool:
    return _SEEN


def check_preempted(what: str = "the next stage") -> None:
    """Raise `Preempted` if SIGTERM was received in this process (call before starting a
    stage or publishing a result)."""
    if _SEEN:
        raise Preempted(f"SIGTERM received earlier; not starting {what}; rerun the same "
                        "command to resume")


def raise_preempted(message: str) -> None:
    """Record the preemption (so that later `check_preempted` calls raise too) and raise
    `Preempted(message)`; for code that stopped on a SIGTERM seen here or, in a multi-process
    run, by another process."""
    global _SEEN
    _SEEN = True
    raise Preempted(message)


def _raise_preempted(signum, frame):  # noqa: ARG001
    if _SEEN:   # a second SIGTERM while the first unwinds: let the clean exit finish
        return
    raise_preempted("SIGTERM outside the train loop; nothing new was published; rerun the "
                    "same command to resume")


def install_preemption_handler() -> None:
    """SIGTERM raises `Preempted` in the main thread (see the module docstring)."""
    try:
        signal.signal(signal.SIGTERM, _raise_preempted)
    except ValueError:  # not the main thread (some notebook runners): leave SIGTERM as is
        pass


class PreemptionGuard:
    """Context manager: while active, SIGTERM sets `.requested` instead of killing.

    The train loop polls `.requested`, saves a checkpoint and raises `Preempted`; the
    previous handler is restored on exit.
    """

    def __init__(self, signals=(signal.SIGTERM,)):
        self.signals = signals
        self.requested = False
        self._old = {}

    def _handler(self, signum, frame):  # noqa: ARG002
        global _SEEN
        _SEEN = True
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
