"""Compile the fine-tune stages' train steps ahead of their stages, through JAX's
persistent compilation cache.

Every stage of a dynamic_detr run is one `lib.common.train_loop.train` call, which jits its
task's step with `train_loop.build_step` when its loop starts. On the H200 lease that
compile took 30-40 s per fine-tune, inside each stage's share of the wall-clock budget.
`compile_step` lowers and compiles exactly what `train_loop.train` will (same step,
shardings, donation, argument shapes and dtypes), so with the persistent cache on
(`enable_cache`) the stage's own compile later is a cache read plus tracing.
`Precompiler` does it for a list of tasks in a background thread, e.g. while dense
pre-training runs (XLA compiles on host threads, the accelerator keeps training).

Needs the in-graph matcher (`loss.matcher = "jax"`): JAX does not store executables with
host callbacks (the scipy matcher), so nothing would be cached.
"""
from __future__ import annotations

import threading
import time

import jax
import numpy as np

from lib.common import mesh as mesh_lib, train_loop


def enable_cache(directory: str) -> None:
    """Turn JAX's persistent compilation cache on in `directory`, for every compile (no
    minimum compile time or entry size)."""
    jax.config.update("jax_compilation_cache_dir", directory)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def abstract_inputs(task: train_loop.Task, mesh, seed: int):
    """(state, batch, key) as `jax.ShapeDtypeStruct`s with the shardings `train_loop.train`
    gives them, and the state sharding."""
    key = jax.random.key(seed)
    abstract = jax.eval_shape(task.init_state, key)
    sharding = mesh_lib.param_sharding(abstract, mesh)
    state = jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s),
                         abstract, sharding)
    rows = mesh_lib.process_slice(task.global_batch_size)
    batch_sharding = mesh_lib.batch_sharding(mesh)
    batch = jax.tree.map(lambda a: jax.ShapeDtypeStruct((task.global_batch_size,) + np.shape(a)[1:],
                                                        np.asarray(a).dtype, sharding=batch_sharding),
                         task.batch_fn(0, rows))
    step_key = jax.eval_shape(lambda k: jax.random.fold_in(k, 0), jax.random.key(seed + 1))
    step_key = jax.ShapeDtypeStruct(step_key.shape, step_key.dtype, sharding=mesh_lib.replicated(mesh))
    return state, batch, step_key, sharding


def compile_step(task: train_loop.Task, mesh, seed: int = 0) -> float:
    """Lower and compile `task`'s train step as `train_loop.train` will; seconds taken."""
    t0 = time.perf_counter()
    state, batch, key, sharding = abstract_inputs(task, mesh, seed)
    train_loop.build_step(task, mesh, sharding).lower(state, batch, key).compile()
    return time.perf_counter() - t0


class Precompiler:
    """Compile `tasks` ({name: Task}) one after another in a daemon thread; `seconds`
    (name -> compile time) fills in as they finish, `error` holds the first failure
    (re-raised by `join`). A stage that starts before its task is compiled compiles it
    itself, as without a precompiler."""

    def __init__(self, tasks: dict, mesh, seed: int = 0):
        self.seconds: dict[str, float] = {}
        self.error: BaseException | None = None
        self._finished = False                # set under the lock: is_alive() lags the notify
        self._done = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(dict(tasks), mesh, seed), daemon=True)
        self._thread.start()

    def _run(self, tasks, mesh, seed):
        try:
            for name, task in tasks.items():
                seconds = compile_step(task, mesh, seed)
                with self._done:
                    self.seconds[name] = seconds
                    self._done.notify_all()
        except BaseException as err:          # surfaced by wait()/join(); never kills the run
            self.error = err
        finally:
            with self._done:
                self._finished = True
                self._done.notify_all()

    def wait(self, name: str) -> float | None:
        """Block until `name` is compiled (its seconds) or the thread has ended without it
        (None); re-raises the thread's failure."""
        with self._done:
            self._done.wait_for(lambda: name in self.seconds or self._finished)
        if self.error is not None:
            raise self.error
        return self.seconds.get(name)

    def join(self) -> dict[str, float]:
        self._thread.join()
        if self.error is not None:
            raise self.error
        return dict(self.seconds)
