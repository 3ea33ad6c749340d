"""Data-parallel steps on 8 fake CPU devices match the 1-device step; sharding rules."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.common import mesh as mesh_lib, train_loop
from tests.common import regression_app as app


def _run(mesh, n_steps=5):
    task = app.make_task(app.get_config("tiny"))
    cfg = train_loop.LoopConfig(num_steps=n_steps, seed=0)
    state, sharding, _ = train_loop.init_or_restore(task, cfg, mesh, None)
    step = train_loop.build_step(task, mesh, sharding)
    key = jax.random.key(1)
    losses = []
    for i in range(n_steps):
        batch = mesh_lib.to_global(task.batch_fn(i, slice(None)), mesh)
        state, m = step(state, batch, jax.random.fold_in(key, i))
        losses.append(float(m["loss"]))
    return jax.device_get(state), losses, batch


def test_eight_device_data_parallel_step_matches_one_device():
    assert jax.device_count() == 8
    mesh8 = mesh_lib.make_mesh()
    mesh1 = mesh_lib.make_mesh(devices=jax.devices()[:1])
    s8, l8, batch8 = _run(mesh8)
    s1, l1, _ = _run(mesh1)
    assert len(batch8["x"].sharding.device_set) == 8  # the batch really is split
    np.testing.assert_allclose(l8, l1, rtol=1e-5)
    for a, b in zip(jax.tree.leaves(s8["params"]), jax.tree.leaves(s1["params"])):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_mesh_shapes_and_errors():
    assert dict(mesh_lib.make_mesh().shape) == {"data": 8, "model": 1}
    assert dict(mesh_lib.make_mesh(model=2).shape) == {"data": 4, "model": 2}
    part = mesh_lib.make_mesh(data=3)          # the first 3 of the 8 devices
    assert dict(part.shape) == {"data": 3, "model": 1}
    assert list(part.devices.flat) == jax.devices()[:3]
    with pytest.raises(ValueError, match="does not match the 8 devices"):
        mesh_lib.make_mesh(data=9)
    with pytest.raises(ValueError, match="divide the 8 devices"):
        mesh_lib.make_mesh(model=3)
    with pytest.raises(ValueError, match="divisible by the data-axis size 8"):
        mesh_lib.check_batch_divisible(12, mesh_lib.make_mesh())


def test_param_sharding_rule():
    mesh = mesh_lib.make_mesh(model=2)
    params = {"big": jnp.zeros((1024, 512)), "small": jnp.zeros((3,)), "odd": jnp.zeros((999, 999))}
    sh = mesh_lib.param_sharding(params, mesh)
    assert sh["big"].spec == jax.P("model", None)
    assert sh["small"].spec == jax.P()
    assert sh["odd"].spec == jax.P()  # nothing divisible by 2
    rep = mesh_lib.param_sharding(params, mesh_lib.make_mesh())
    assert all(s.spec == jax.P() for s in jax.tree.leaves(rep))
