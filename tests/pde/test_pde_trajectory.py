"""`simulate`: frame layout, sharded batches on 8 fake devices, blow-up reports."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType

from lib.pde import kdv, navier_stokes as ns, trajectory


def test_frames_are_every_save_every_steps():
    run = trajectory.simulate(jnp.zeros((1, 4)), lambda s: s + 1.0, n_steps=12, save_every=4)
    np.testing.assert_array_equal(run.frames[:, 0, 0], [4.0, 8.0, 12.0])
    np.testing.assert_array_equal(run.final_state, 12.0)
    assert int(run.blowup_step) == -1
    with pytest.raises(ValueError, match="multiple of save_every"):
        trajectory.simulate(jnp.zeros((1, 4)), lambda s: s, n_steps=10, save_every=4)


def test_sharded_batch_equals_single_device():
    assert jax.device_count() == 8
    n = 32
    keys = jax.random.split(jax.random.key(0), 8)
    initial = jax.jit(jax.vmap(lambda k: ns.random_initial_state(k, n)))(keys)
    step = ns.make_step(n, 0.02)
    observe = lambda omega: ns.vorticity_to_velocity(omega[0])
    mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
    sharded = trajectory.make_batch_simulator(step, 20, 5, observe, mesh=mesh)(initial)
    single = trajectory.make_batch_simulator(step, 20, 5, observe)(initial)
    assert sharded.frames.shape == (8, 4, 2, n, n)
    assert len(sharded.frames.sharding.device_set) == 8
    assert sharded.frames.addressable_shards[0].data.shape == (1, 4, 2, n, n)
    np.testing.assert_allclose(np.asarray(sharded.frames), np.asarray(single.frames), rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="not divisible by the 8 devices"):
        trajectory.make_batch_simulator(step, 20, 5, mesh=mesh)(initial[:6])
    with pytest.raises(ValueError, match="AxisType.Auto"):
        explicit = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Explicit,))
        trajectory.make_batch_simulator(step, 20, 5, mesh=explicit)


def test_blowup_names_the_step_and_the_field():
    def step(state):  # u counts steps; v turns NaN after the 7th step
        u = state[0] + 1.0
        return jnp.stack([u, jnp.where(u >= 7.0, jnp.nan, state[1])])

    batch = jnp.zeros((3, 2, 4)).at[1, 0].set(-2.0)  # sample 1 lags two steps behind
    run = trajectory.make_batch_simulator(step, 12, 3)(batch)
    np.testing.assert_array_equal(run.blowup_step, [7, 9, 7])
    message = r"field\(s\) 'v' of sample 0 became NaN/Inf at step 107 \(t = 10.7"
    with pytest.raises(trajectory.BlowUpError, match=message):
        trajectory.raise_on_blowup(run, ("u", "v"), step_offset=100, dt=0.1)


def test_a_real_blowup_is_reported():
    # An amplitude far above the CFL bound the step was built for.
    step = kdv.make_step(64, 0.02, max_amplitude=0.5)
    u0 = 20 * kdv.random_initial_state(jax.random.key(0), 64)
    run = trajectory.simulate(u0, step, 200, 50)
    assert int(run.blowup_step) > 0
    with pytest.raises(trajectory.BlowUpError, match="field\\(s\\) 'u' of sample 0 became NaN/Inf at step"):
        trajectory.raise_on_blowup(run, kdv.FIELD_NAMES)
