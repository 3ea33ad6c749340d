"""Replay buffer as a pure pytree (a ring buffer of fixed capacity, jit- and vmap-friendly).

    buf = init(capacity, obs_dim, act_dim)
    buf = add(buf, obs, action, reward, next_obs, mask)   # one transition
    batch = sample(buf, key, batch_size)                   # uniform over stored rows

`mask` is 1 − terminated: the TD target's bootstrap weight (time-outs keep mask = 1).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

FIELDS = ("obs", "action", "reward", "next_obs", "mask")


def init(capacity: int, obs_dim: int, act_dim: int) -> dict:
    """Empty buffer: arrays (capacity, ·) float32, `pos` (next write row) and `size`."""
    if capacity < 1:
        raise ValueError(f"replay capacity must be >= 1, got {capacity}")
    z = lambda *s: jnp.zeros((capacity,) + s, jnp.float32)
    return {"obs": z(obs_dim), "action": z(act_dim), "reward": z(), "next_obs": z(obs_dim),
            "mask": z(), "pos": jnp.zeros((), jnp.int32), "size": jnp.zeros((), jnp.int32)}


def capacity(buf: dict) -> int:
    return buf["reward"].shape[0]


def add(buf: dict, obs, action, reward, next_obs, mask) -> dict:
    """Write one transition at `pos` (overwriting the oldest when full)."""
    i = buf["pos"]
    new = dict(buf)
    for name, value in zip(FIELDS, (obs, action, reward, next_obs, mask)):
        new[name] = buf[name].at[i].set(jnp.asarray(value, jnp.float32))
    cap = capacity(buf)
    new["pos"] = (i + 1) % cap
    new["size"] = jnp.minimum(buf["size"] + 1, cap)
    return new


def sample(buf: dict, key: jax.Array, batch_size: int) -> dict:
    """`batch_size` rows drawn uniformly with replacement from the stored ones (size ≥ 1)."""
    idx = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buf["size"], 1))
    return {name: buf[name][idx] for name in FIELDS}
