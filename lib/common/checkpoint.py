"""Checkpoints through Orbax (the only module in the workspace that imports orbax).

`Checkpointer` saves a train-state pytree every `save_every` steps and at the end, keeps
the newest `keep`, and restores the newest *intact* step: a step whose files are damaged
is moved aside to `<workdir>/checkpoints_damaged/` with a warning, and the previous one is
used. Restores go into an abstract tree that carries the target shardings.
"""
from __future__ import annotations

import logging as logging_std
import os
import shutil
from typing import Any

import jax
import orbax.checkpoint as ocp
from absl import logging


class _QuietOrbax(logging_std.Filter):
    """Drop orbax's INFO chatter (several lines per save); its warnings still show."""

    def filter(self, record: logging_std.LogRecord) -> bool:
        return record.levelno >= logging_std.WARNING or "orbax" not in record.pathname


logging.get_absl_logger().addFilter(_QuietOrbax())


class Checkpointer:
    """Save/restore a pytree under `directory` (one sub-folder per step)."""

    def __init__(self, directory: str, save_every: int, keep: int = 3):
        if save_every < 1 or keep < 1:
            raise ValueError(f"save_every={save_every} and keep={keep} must be >= 1")
        self.directory = os.path.abspath(directory)
        self.save_every = save_every
        self._options = ocp.CheckpointManagerOptions(
            max_to_keep=keep, save_interval_steps=1, create=True
        )
        self._manager = ocp.CheckpointManager(self.directory, options=self._options)

    # -- queries
    def all_steps(self) -> list[int]:
        return sorted(self._manager.all_steps())

    def latest_step(self) -> int | None:
        return self._manager.latest_step()

    # -- save
    def should_save(self, step: int) -> bool:
        return step % self.save_every == 0

    def save(self, step: int, state: Any, *, wait: bool = False) -> None:
        """Save `state` as `step` (asynchronous unless `wait`); a step saved twice is skipped."""
        if step in self._manager.all_steps():
            return
        self._manager.save(step, args=ocp.args.StandardSave(state), force=True)
        if wait:
            self._manager.wait_until_finished()

    def wait(self) -> None:
        self._manager.wait_until_finished()

    def close(self) -> None:
        self._manager.wait_until_finished()
        self._manager.close()

    # -- restore
    def restore_latest(self, abstract_state: Any) -> tuple[Any, int] | None:
        """Restore the newest intact step into `abstract_state`'s structure and shardings.

        `abstract_state` is a pytree of `jax.ShapeDtypeStruct` (with `.sharding`) or of
        arrays. Returns (state, step), or None when no checkpoint exists. Damaged steps
        are moved aside with a warning; if every step is damaged, raises RuntimeError.
        """
        steps = self.all_steps()
        if not steps:
            return None
        target = jax.tree.map(_abstract, abstract_state)
        errors = []
        for step in reversed(steps):
            try:
                state = self._manager.restore(step, args=ocp.args.StandardRestore(target))
            except Exception as err:  # orbax/tensorstore raise many types on damaged files
                errors.append(f"step {step}: {type(err).__name__}: {str(err)[:200]}")
                logging.warning(
                    "checkpoint at step %d in %s is damaged or does not match the model "
                    "(%s); falling back to the previous checkpoint",
                    step, self.directory, type(err).__name__,
                )
                self._move_aside(step)
                continue
            if step != steps[-1]:
                logging.warning("resumed from step %d instead of the damaged latest step %d",
                                step, steps[-1])
            return state, step
        raise RuntimeError(
            f"no checkpoint in {self.directory} could be restored:\n  " + "\n  ".join(errors)
        )

    def _move_aside(self, step: int) -> None:
        """Move a damaged step out of the manager's folder (kept, never deleted)."""
        src = os.path.join(self.directory, str(step))
        if jax.process_index() == 0 and os.path.isdir(src):
            dst_root = self.directory.rstrip("/") + "_damaged"
            os.makedirs(dst_root, exist_ok=True)
            dst = os.path.join(dst_root, str(step))
            suffix = 0
            while os.path.exists(dst):
                suffix += 1
                dst = os.path.join(dst_root, f"{step}.{suffix}")
            shutil.move(src, dst)
            logging.warning("moved damaged checkpoint %s to %s", src, dst)
        self._manager.reload()


def _abstract(x: Any) -> Any:
    if isinstance(x, jax.ShapeDtypeStruct):
        return x
    sharding = getattr(x, "sharding", None)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
