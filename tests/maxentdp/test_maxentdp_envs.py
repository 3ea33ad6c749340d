"""Environments (deterministic under a key, the multi-goal reward by hand) and the buffer."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.maxentdp import envs, replay, rollout


def _trajectory(env, key, steps=12):
    k0, key = jax.random.split(key)
    state, obs = env.reset(k0)
    out = [obs]
    for k in jax.random.split(key, steps):
        ka, ks = jax.random.split(k)
        a = jax.random.uniform(ka, (env.act_dim,), minval=-1, maxval=1)
        state, obs, r, term = env.step(state, a, ks)
        out += [obs, r[None], term[None].astype(jnp.float32)]
    return np.concatenate([np.ravel(x) for x in out])


@pytest.mark.parametrize("name", ["multigoal", "pendulum"])
def test_env_steps_are_deterministic_under_a_fixed_key(name):
    if name == "pendulum":
        pytest.importorskip("gymnax")
    env = envs.make(name)
    a, b = _trajectory(env, jax.random.key(3)), _trajectory(env, jax.random.key(3))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, _trajectory(env, jax.random.key(4)))


def test_multigoal_reward_and_termination_by_hand():
    env = envs.multigoal(envs.MultiGoalParams(), horizon=30)
    pos, obs, r, term = env.step(jnp.array([4.5, 0.0]), jnp.array([0.5, 0.0]), None)
    np.testing.assert_allclose(pos, [5.0, 0.0])
    np.testing.assert_allclose(r, -30 * 0.25 - 0.0 + 10.0)      # at the goal (+5, 0)
    assert bool(term)
    pos, obs, r, term = env.step(jnp.array([0.0, 0.0]), jnp.array([0.0, -2.0]), None)
    np.testing.assert_allclose(pos, [0.0, -1.0])                   # action clipped to 1
    np.testing.assert_allclose(r, -30 * 1.0 - 16.0)               # nearest goal (0, −5)
    assert not bool(term)
    pos, *_ = env.step(jnp.array([6.8, 0.0]), jnp.array([1.0, 0.0]), None)
    np.testing.assert_allclose(pos, [7.0, 0.0])                    # walls at ±7


def test_pendulum_action_is_scaled_torque():
    pytest.importorskip("gymnax")
    env = envs.make("pendulum")
    state, _ = env.reset(jax.random.key(0))
    _, _, r, term = env.step(state, jnp.array([0.5]), jax.random.key(1))
    th, thd = float(state.theta), float(state.theta_dot)
    th_n = ((th + np.pi) % (2 * np.pi)) - np.pi
    np.testing.assert_allclose(r, -(th_n ** 2 + 0.1 * thd ** 2 + 0.001 * 1.0 ** 2), rtol=1e-5)
    assert not bool(term)


def test_replay_ring_buffer_wraps_and_samples_only_stored_rows():
    buf = replay.init(3, 1, 1)
    for i in range(5):
        buf = replay.add(buf, [i], [i], i, [i + 1], 1.0)
    assert int(buf["size"]) == 3 and int(buf["pos"]) == 2
    np.testing.assert_array_equal(np.sort(buf["reward"]), [2, 3, 4])
    buf2 = replay.add(replay.init(8, 1, 1), [7.0], [0.0], 7.0, [8.0], 0.0)
    s = replay.sample(buf2, jax.random.key(0), 50)
    np.testing.assert_array_equal(s["reward"], 7.0)                # only the stored row
    np.testing.assert_array_equal(s["mask"], 0.0)


def test_collector_truncates_at_horizon_with_bootstrap_and_resets():
    env = envs.multigoal(envs.MultiGoalParams(init_std=0.0), horizon=3)
    carry = {"buffer": replay.init(10, 2, 2), "env_state": jnp.zeros(2), "obs": jnp.zeros(2),
             "t": jnp.zeros((), jnp.int32), "ep_return": jnp.zeros(()),
             "last_return": jnp.zeros(())}
    for k in jax.random.split(jax.random.key(0), 4):
        carry = rollout.env_transition(env, carry, jnp.array([0.1, 0.0]), k)
    buf = carry["buffer"]
    np.testing.assert_allclose(buf["mask"][:4], 1.0)              # time-outs keep mask = 1
    np.testing.assert_allclose(buf["obs"][3], [0.0, 0.0])          # reset after 3 steps
    np.testing.assert_allclose(buf["next_obs"][2], [0.3, 0.0], atol=1e-6)
    assert int(carry["t"]) == 1
    # an episode that reaches a goal stores mask 0 and its return
    carry = {**carry, "env_state": jnp.array([4.5, 0.0]), "obs": jnp.array([4.5, 0.0]),
             "t": jnp.zeros((), jnp.int32), "ep_return": jnp.zeros(())}
    carry = rollout.env_transition(env, carry, jnp.array([0.5, 0.0]), jax.random.key(1))
    assert float(carry["buffer"]["mask"][4]) == 0.0
    np.testing.assert_allclose(carry["last_return"], 2.5)
    np.testing.assert_allclose(carry["obs"], [0.0, 0.0])
