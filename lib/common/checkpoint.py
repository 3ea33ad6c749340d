"""Checkpoints through Orbax (the only module in the workspace that imports orbax).

`Checkpointer` saves a train-state pytree every `save_every` steps and at the end, keeps
the newest `keep`, and restores the newest step into an abstract tree that carries the
target shardings. Before restoring a step it reads the step's stored tree metadata and
compares it with the model:

* a step whose files cannot be read (its metadata, or its arrays, even when read to the
  host on their own) is moved aside to `<workdir>/checkpoints_damaged/` with a warning
  (kept, never deleted) and the previous step is tried; when none is left,
  `NoReadableCheckpoint`;
* a step that is intact but whose tree differs from the model (a leaf added or removed, a
  changed shape or dtype: code or config changed since it was saved) raises
  `CheckpointMismatch`, one line naming the differing leaves; nothing is moved;
* any other failure of an intact, matching step (out of memory, a sharding problem) is
  raised as it is; nothing is moved.
"""
from __future__ import annotations

import io
import logging as logging_std
import os
import shutil
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
from absl import logging

from lib.common import workdir as wd
from lib.common.config import WorkdirError


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
        # The handler is named up front so that a fresh process can read a step's
        # metadata before any save or restore has registered it.
        self._manager = ocp.CheckpointManager(self.directory, options=self._options,
                                              item_handlers=ocp.StandardCheckpointHandler())

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
        state = jax.tree.map(_host_if_replicated, state)
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
        """Restore the newest readable step into `abstract_state`'s structure and shardings.

        `abstract_state` is a pytree of `jax.ShapeDtypeStruct` (with `.sharding`) or of
        arrays. Returns (state, step), or None when no checkpoint exists. Unreadable steps
        are moved aside with a warning (`NoReadableCheckpoint` when every step is); a
        readable step whose tree differs from `abstract_state` raises `CheckpointMismatch`
        and moves nothing (see the module docstring).
        """
        steps = self.all_steps()
        if not steps:
            return None
        target = jax.tree.map(_abstract, abstract_state)
        expected = _flat_leaves(target)
        errors = []
        for step in reversed(steps):
            stored = self._stored_leaves(step)
            differences = _differences(stored, expected) if stored is not None else []
            if differences:
                raise CheckpointMismatch(
                    f"checkpoint step {step} in {self.directory} does not match the model "
                    f"({'; '.join(differences)}); nothing was moved. The code or config changed "
                    "since it was saved: restore them, or use a new --workdir")
            try:
                state = self._manager.restore(step, args=ocp.args.StandardRestore(target))
            except Exception as err:  # orbax/tensorstore raise many types on damaged files
                if stored is not None and self._readable(step):
                    raise                  # intact and matching: not the files' fault
                self._unreadable(step, err, errors)
                continue
            if step != steps[-1]:
                logging.warning("resumed from step %d instead of the damaged latest step %d",
                                step, steps[-1])
            return state, step
        raise NoReadableCheckpoint(
            f"no checkpoint in {self.directory} could be restored, every step is unreadable "
            f"and was moved to {self.directory}{_DAMAGED}/ ({'; '.join(errors)})")

    def restore_step(self, abstract_state: Any, step: int) -> Any:
        """Restore the kept step `step` (not only the newest: e.g. to see how a metric moved
        over training) into `abstract_state`'s structure; a ValueError naming the kept steps
        when it is not kept, `CheckpointMismatch` when its tree differs. Moves nothing."""
        steps = self.all_steps()
        if step not in steps:
            raise ValueError(f"step {step} is not kept in {self.directory}; kept: {steps}")
        target = jax.tree.map(_abstract, abstract_state)
        stored = self._stored_leaves(step)
        differences = _differences(stored, _flat_leaves(target)) if stored is not None else []
        if differences:
            raise CheckpointMismatch(f"checkpoint step {step} in {self.directory} does not match "
                                     f"the model ({'; '.join(differences)})")
        return self._manager.restore(step, args=ocp.args.StandardRestore(target))

    def _stored_leaves(self, step: int) -> dict[str, Any] | None:
        """{dotted path: stored array metadata} of `step`; None when unreadable."""
        try:
            metadata = self._manager.item_metadata(step)
            return _flat_leaves(metadata.tree)
        except Exception:  # noqa: BLE001 -- orbax raises many types on unreadable metadata
            return None

    def _readable(self, step: int) -> bool:
        """Whether every array of `step` reads back to host memory on its own."""
        try:
            cpu = jax.sharding.SingleDeviceSharding(jax.local_devices(backend="cpu")[0])
            meta = self._manager.item_metadata(step).tree
            host = jax.tree.map(
                lambda m: jax.ShapeDtypeStruct(m.shape, m.dtype, sharding=cpu)
                if hasattr(m, "shape") and hasattr(m, "dtype") else m, meta)
            self._manager.restore(step, args=ocp.args.StandardRestore(host))
        except Exception:  # noqa: BLE001 -- any failure to read is what this asks
            return False
        return True

    def _unreadable(self, step: int, err: Exception, errors: list[str]) -> None:
        message = " ".join(str(err).split())[:200]
        errors.append(f"step {step}: {type(err).__name__}: {message}")
        logging.warning("checkpoint at step %d in %s is damaged (%s: %s); falling back to the "
                        "previous checkpoint", step, self.directory, type(err).__name__, message)
        self._move_aside(step)

    def _move_aside(self, step: int) -> None:
        """Move a damaged step out of the manager's folder (kept, never deleted)."""
        src = os.path.join(self.directory, str(step))
        if jax.process_index() == 0 and os.path.isdir(src):
            dst_root = self.directory.rstrip("/") + _DAMAGED
            os.makedirs(dst_root, exist_ok=True)
            dst = os.path.join(dst_root, str(step))
            suffix = 0
            while os.path.exists(dst):
                suffix += 1
                dst = os.path.join(dst_root, f"{step}.{suffix}")
            shutil.move(src, dst)
            logging.warning("moved damaged checkpoint %s to %s", src, dst)
        self._manager.reload()


_DAMAGED = "_damaged"      # = lib.common.workdir.DAMAGED_SUFFIX
_SHOWN = 6                 # differing leaves named in a CheckpointMismatch


class CheckpointMismatch(WorkdirError):
    """A readable checkpoint whose tree differs from the model's (one line; nothing moved)."""


class NoReadableCheckpoint(WorkdirError):
    """Every step of a checkpoint folder was unreadable (each moved aside)."""


def _flat_leaves(tree: Any) -> dict[str, Any]:
    """{dotted path: leaf} of a state tree or of Orbax's stored tree metadata (tuples and
    named tuples are stored as lists, so paths use indices and field names alike)."""
    return {".".join(str(k) for k in path): leaf
            for path, leaf in ocp.tree.to_flat_dict(tree).items()}


def _describe(leaf: Any) -> str:
    shape = getattr(leaf, "shape", None)
    dtype = getattr(leaf, "dtype", None)
    return f"{tuple(shape) if shape is not None else '?'} {_dtype_name(dtype)}"


def _dtype_name(dtype: Any) -> str:
    if dtype is None:
        return "?"
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)


def _differences(stored: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """The leaves where a stored tree and the model's differ, as short phrases: shortest
    paths first (parameters before their optimiser-state mirrors), the first `_SHOWN`,
    then a count."""
    out = []
    for path in sorted(set(stored) | set(expected), key=lambda p: (p.count("."), len(p), p)):
        if path not in expected:
            out.append(f"{path}: stored {_describe(stored[path])}, not in the model")
        elif path not in stored:
            out.append(f"{path}: not in the checkpoint, the model has {_describe(expected[path])}")
        else:
            a, b = stored[path], expected[path]
            shape_a, shape_b = getattr(a, "shape", None), getattr(b, "shape", None)
            dtype_a, dtype_b = getattr(a, "dtype", None), getattr(b, "dtype", None)
            if ((shape_a is not None and shape_b is not None and tuple(shape_a) != tuple(shape_b))
                    or (dtype_a is not None and dtype_b is not None
                        and _dtype_name(dtype_a) != _dtype_name(dtype_b))):
                out.append(f"{path}: stored {_describe(a)}, the model has {_describe(b)}")
    if len(out) > _SHOWN:
        out = out[:_SHOWN] + [f"and {len(out) - _SHOWN} more leaves"]
    return out


def _host_if_replicated(x: Any) -> Any:
    """A fully replicated jax.Array held by this process as one NumPy copy; any other leaf
    unchanged. Orbax writes one replica of a replicated array by slicing it per device (a
    small state on 8 devices: ~1.5 s of eager compiles per first save, against 0.04 s from
    host memory); sharded and multi-host arrays keep Orbax's per-shard writes. Restores are
    unchanged: they take their shardings from the target."""
    if isinstance(x, jax.Array) and x.is_fully_addressable and x.is_fully_replicated:
        return np.asarray(x)
    return x


def _abstract(x: Any) -> Any:
    if isinstance(x, jax.ShapeDtypeStruct):
        return x
    sharding = getattr(x, "sharding", None)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)


def _leaf_paths(tree: Any) -> list[tuple[str, Any]]:
    """[(dotted path, leaf)] in `jax.tree` leaf order (dict keys, sequence indices and
    attribute names alike), the names of a `save_params` file."""
    def name(k):
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                return str(getattr(k, attr))
        return str(k)
    return [(".".join(name(k) for k in path), leaf)
            for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]]


def save_params(path: str, tree: Any) -> None:
    """Write a parameter pytree to `path` (.npz, one array per dotted leaf path), atomically:
    a small, dependency-free file for trained weights that are committed to the repository
    (a full train state stays in Orbax `Checkpointer` folders)."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{k: np.asarray(v) for k, v in _leaf_paths(jax.device_get(tree))})
    wd.write_bytes_atomic(path, buffer.getvalue())


def load_params(path: str, like: Any) -> Any:
    """The pytree `save_params` wrote to `path`, in the structure of `like` (a tree of arrays
    or `jax.ShapeDtypeStruct`s, e.g. `jax.eval_shape(model.init, ...)`), as numpy arrays.

    `CheckpointMismatch` (one line naming the file and the differing leaves) when a leaf is
    missing, extra, or of another shape or dtype; FileNotFoundError naming a missing file.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such parameter file")
    with np.load(path) as f:
        stored = {k: f[k] for k in f.files}
    expected = _leaf_paths(like)
    problems = _differences(stored, dict(expected))
    if problems:
        raise CheckpointMismatch(f"{path}: the stored parameters differ from the model's: "
                                 + "; ".join(problems))
    return jax.tree.unflatten(jax.tree.structure(like), [stored[k] for k, _ in expected])
