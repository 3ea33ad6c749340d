"""The metric writer: JSONL in the workdir, absl logging, TensorBoard when installed.

Only the primary process (process 0) writes; on the others the writer is a no-op, so
experiment code calls it unconditionally.
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping

import numpy as np
from absl import logging

from lib.common import workdir as wd


def _scalar(v: Any) -> float | int:
    a = np.asarray(v)
    if a.size != 1:
        raise ValueError(f"metric value of shape {a.shape} is not a scalar")
    item = a.reshape(()).item()
    return item


class MetricWriter:
    """`write_scalars(step, {...})`, `write_hparams({...})`, `flush()`, `close()`.

    Rows are appended to `<workdir>/metrics.jsonl`, which is never emptied: `resume_step`
    (the step a run resumed from) drops only the rows logged after it, whose work was lost
    with the process and is being redone; without it every row is kept. (A fresh start
    over rows of lost progress is refused before any writer exists: see
    `lib.common.workdir.check_fresh_start`.)
    """

    def __init__(self, workdir: str, *, primary: bool = True, resume_step: int | None = None,
                 tensorboard: bool = True):
        self.primary = primary
        self.path = os.path.join(workdir, wd.METRICS)
        self._file = None
        self._tb = None
        if not primary:
            return
        os.makedirs(workdir, exist_ok=True)
        if resume_step is not None:
            _truncate_after(self.path, resume_step)
        self._file = open(self.path, "a")
        if tensorboard:
            self._tb = _tensorboard_writer(os.path.join(workdir, "tensorboard"))

    def write_scalars(self, step: int, scalars: Mapping[str, Any]) -> None:
        if not self.primary:
            return
        row = {"step": int(step), **{k: _scalar(v) for k, v in scalars.items()}}
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        logging.info("step %d: %s", step,
                     ", ".join(f"{k}={v:.5g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in row.items() if k != "step"))
        if self._tb is not None:
            for k, v in row.items():
                if k != "step":
                    self._tb.add_scalar(k, v, step)

    def write_hparams(self, hparams: Mapping[str, Any]) -> None:
        if self.primary:
            logging.info("hparams: %s", json.dumps(dict(hparams), default=str))

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()
        if self._tb is not None:
            self._tb.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._tb is not None:
            self._tb.close()
            self._tb = None


def read_metrics(workdir: str) -> list[dict]:
    """All rows of `<workdir>/metrics.jsonl` (a torn last line, from a kill, is skipped)."""
    path = os.path.join(workdir, wd.METRICS)
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return rows


def _truncate_after(path: str, step: int) -> None:
    """Drop rows logged after `step` (they belong to work lost with the process)."""
    if not os.path.exists(path):
        return
    kept = [json.dumps(r) + "\n" for r in read_metrics(os.path.dirname(path)) if r["step"] <= step]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(kept)
    os.replace(tmp, path)


def _tensorboard_writer(logdir: str):
    """A tensorboardX writer in `logdir`, or None (with one log line) when not installed."""
    try:
        from tensorboardX import SummaryWriter  # noqa: PLC0415
    except ImportError:
        logging.info("TensorBoard event files off: tensorboardX is not installed "
                     "(pip install -e \".[tensorboard]\")")
        return None
    logging.info("TensorBoard event files in %s", logdir)
    return SummaryWriter(logdir)
