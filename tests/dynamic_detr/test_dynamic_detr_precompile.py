"""Ahead-of-time stage compiles (lib/dynamic_detr/precompile.py): `compile_step` lowers the
same program `train_loop.train` runs, so the persistent cache key is the same (the saving
itself is measured by tools/bench/detr_stage_compile.py), and a failure surfaces on join."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lib.common import mesh as mesh_lib, train_loop
from lib.dynamic_detr import precompile


def _task(fail=False):
    opt = optax.sgd(0.1)

    def init_state(key):
        params = {"w": jax.random.normal(key, (4,))}
        return {"params": params, "opt_state": opt.init(params), "step": jnp.int32(0)}

    def train_step(state, batch, key):
        if fail:
            raise ValueError("broken step")
        noise = 0.0 * jax.random.normal(key, ())
        loss_fn = lambda p: jnp.mean((batch["x"] @ p["w"] - batch["y"] + noise) ** 2)
        loss, grads = jax.value_and_grad(loss_fn)(state["params"])
        return train_loop.apply_gradients(state, grads, opt), {"loss": loss}

    def batch_fn(step, rows):
        rng = np.random.default_rng(step)
        x = rng.normal(size=(8, 4)).astype(np.float32)
        return {"x": x[rows], "y": x[rows].sum(-1)}

    return train_loop.Task(init_state, train_step, batch_fn, 8)


def test_compile_step_lowers_what_the_train_loop_runs():
    task, mesh, seed = _task(), mesh_lib.make_mesh(), 3
    state_abs, batch_abs, key_abs, sharding = precompile.abstract_inputs(task, mesh, seed)
    ahead = train_loop.build_step(task, mesh, sharding).lower(state_abs, batch_abs, key_abs).as_text()
    # the arguments train_loop.train passes at its first step
    state, sharding, start = train_loop.init_or_restore(
        task, train_loop.LoopConfig(num_steps=1, seed=seed), mesh, None)
    batch = mesh_lib.to_global(task.batch_fn(start, mesh_lib.process_slice(8)), mesh)
    key = jax.random.fold_in(jax.random.key(seed + 1), start)
    loop = train_loop.build_step(task, mesh, sharding).lower(state, batch, key).as_text()
    assert ahead == loop
    assert precompile.compile_step(task, mesh, seed) > 0


def test_precompiler_reports_times_and_reraises_a_failure():
    mesh = mesh_lib.make_mesh()
    pre = precompile.Precompiler({"ok": _task()}, mesh)
    assert pre.wait("ok") > 0
    assert pre.wait("never_queued") is None                  # the thread ended without it
    assert list(pre.join()) == ["ok"]
    pre = precompile.Precompiler({"bad": _task(fail=True)}, mesh)
    with pytest.raises(ValueError, match="broken step"):
        pre.wait("bad")
    with pytest.raises(ValueError, match="broken step"):
        pre.join()


def test_wait_returns_once_the_thread_has_finished_even_while_it_still_looks_alive():
    """The thread notifies in its `finally` and only then exits: a waiter woken by that
    notify may still see `is_alive()`; it must not wait for a notify that never comes."""
    import threading

    pre = precompile.Precompiler({}, mesh_lib.make_mesh())
    pre.join()
    pre._thread.is_alive = lambda: True                       # the exit not yet visible
    got = []
    waiter = threading.Thread(target=lambda: got.append(pre.wait("never_queued")), daemon=True)
    waiter.start()
    waiter.join(timeout=10)
    assert not waiter.is_alive() and got == [None]
