"""Progress on long loops: steps/s and ETA, logged at most every few seconds."""
from __future__ import annotations

import time

from absl import logging


def format_seconds(s: float) -> str:
    s = max(0, int(round(s)))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")


class Progress:
    """`update(step)` logs "desc: step i/n (p%) r steps/s, ETA t" every `every_s` seconds.

    The rate excludes the first update (it carries compilation) and is measured since
    the first update of this process, so it stays right after a resume.
    """

    def __init__(self, total: int, start: int = 0, desc: str = "train", every_s: float = 10.0,
                 clock=time.monotonic, log=logging.info):
        self.total, self.desc, self.every_s = total, desc, every_s
        self._clock, self._log = clock, log
        self._t0 = None
        self._step0 = start
        self._last_log = -float("inf")

    def rate(self, step: int) -> float:
        """Steps per second since the first update (0.0 before two updates)."""
        if self._t0 is None:
            return 0.0
        dt = self._clock() - self._t0
        return (step - self._step0) / dt if dt > 0 else 0.0

    def update(self, step: int, force: bool = False) -> str | None:
        now = self._clock()
        if self._t0 is None:
            self._t0, self._step0 = now, step
        if not force and now - self._last_log < self.every_s:
            return None
        self._last_log = now
        r = self.rate(step)
        eta = format_seconds((self.total - step) / r) if r > 0 else "?"
        msg = (f"{self.desc}: step {step}/{self.total} ({100.0 * step / max(self.total, 1):.1f}%), "
               f"{r:.2f} steps/s, ETA {eta}")
        self._log(msg)
        return msg
