"""Trajectories: `lax.scan` over a step function, batched with `vmap`, sharded over "data".

A step function maps a state of shape `(C, *grid)` to the next state (as built by the
`make_step` of each solver). Temporal downsampling is `save_every`: one frame is kept
every `save_every` solver steps. Every step also checks that the state is finite; the
first non-finite step and the fields that went bad travel with the trajectory, and
`raise_on_blowup` turns them into an error on the host.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

StepFn = Callable[[jax.Array], jax.Array]
ObserveFn = Callable[[jax.Array], jax.Array]


class BlowUpError(FloatingPointError):
    """A simulated field became NaN or Inf."""


class Trajectory(NamedTuple):
    """Output of `simulate` (with a leading batch axis from `make_batch_simulator`).

    frames: `(n_steps // save_every, *observe(state).shape)`; `frames[i]` is
      `observe(state)` after `(i + 1) * save_every` steps (the initial state is not included).
    final_state: the state after `n_steps` steps, to continue from.
    blowup_step: int32 scalar, the first step (1-based, counted from this call's start)
      after which the state had a non-finite value; −1 if it stayed finite.
    blowup_fields: bool `(C,)`, the channels that were non-finite at that step.
    """

    frames: jax.Array
    final_state: jax.Array
    blowup_step: jax.Array
    blowup_fields: jax.Array


def simulate(
    initial_state: jax.Array,
    step_fn: StepFn,
    n_steps: int,
    save_every: int,
    observe: ObserveFn = lambda state: state,
) -> Trajectory:
    """Run `n_steps` steps of `step_fn` from `initial_state` (shape `(C, *grid)`), keeping
    `observe(state)` every `save_every` steps. Two nested `lax.scan`s; pure and vmap-able."""
    if save_every < 1 or n_steps < save_every or n_steps % save_every:
        raise ValueError(
            f"n_steps = {n_steps} must be a positive multiple of save_every = {save_every}"
        )
    n_channels = initial_state.shape[0]

    def one_step(carry, _):
        state, step, bad_step, bad_fields = carry
        state = step_fn(state)
        step = step + 1
        finite = jnp.all(jnp.isfinite(state.reshape(n_channels, -1)), axis=1)
        first = (bad_step < 0) & ~jnp.all(finite)
        bad_step = jnp.where(first, step, bad_step)
        bad_fields = jnp.where(first, ~finite, bad_fields)
        return (state, step, bad_step, bad_fields), None

    def one_frame(carry, _):
        carry, _ = jax.lax.scan(one_step, carry, None, length=save_every)
        return carry, observe(carry[0])

    init = (initial_state, jnp.int32(0), jnp.int32(-1), jnp.zeros(n_channels, bool))
    (state, _, bad_step, bad_fields), frames = jax.lax.scan(
        one_frame, init, None, length=n_steps // save_every
    )
    return Trajectory(frames, state, bad_step, bad_fields)


def make_batch_simulator(
    step_fn: StepFn,
    n_steps: int,
    save_every: int,
    observe: ObserveFn = lambda state: state,
    mesh: Mesh | None = None,
) -> Callable[[jax.Array], Trajectory]:
    """Return `run(initial_states) -> Trajectory`: `simulate` over a batch, jit-compiled once.

    `initial_states` has shape `(B, C, *grid)`; every output leaf gets a leading `B` axis.
    With a `mesh` (a mesh with a "data" axis of type `AxisType.Auto`, as
    `lib.common.mesh.make_mesh` builds), the batch is placed and computed split over "data"
    (`B` must be divisible by that axis size); each trajectory is independent, so the
    result equals the single-device one.
    """
    def run_batch(initial_states: jax.Array) -> Trajectory:
        return jax.vmap(lambda x: simulate(x, step_fn, n_steps, save_every, observe))(
            initial_states
        )

    if mesh is None:
        return jax.jit(run_batch)
    if "data" not in mesh.axis_names or AxisType.Explicit in mesh.axis_types:
        raise ValueError(
            f"mesh axes {dict(zip(mesh.axis_names, mesh.axis_types))} must include 'data', all of "
            "type AxisType.Auto (e.g. lib.common.mesh.make_mesh())"
        )
    sharding = NamedSharding(mesh, P("data"))
    compiled = jax.jit(run_batch, in_shardings=sharding, out_shardings=sharding)
    data_size = mesh.shape["data"]

    def run(initial_states: jax.Array) -> Trajectory:
        if initial_states.shape[0] % data_size:
            raise ValueError(
                f"batch of {initial_states.shape[0]} initial states is not divisible by the "
                f"{data_size} devices of the mesh axis 'data'"
            )
        return compiled(jax.device_put(initial_states, sharding))

    return run


def raise_on_blowup(
    trajectory: Trajectory,
    field_names: Sequence[str],
    step_offset: int = 0,
    dt: float | None = None,
) -> None:
    """Raise `BlowUpError` naming the sample, step and fields if any state went non-finite.

    Args:
      trajectory: from `simulate` (unbatched) or a batch simulator (leading batch axis).
      field_names: one name per state channel, e.g. `("u", "v")`.
      step_offset: solver steps taken before this call (when simulating in chunks).
      dt: time step, to report the time as well.
    """
    steps = np.atleast_1d(np.asarray(trajectory.blowup_step))
    fields = np.asarray(trajectory.blowup_fields).reshape(steps.shape[0], -1)
    bad = np.flatnonzero(steps >= 0)
    if bad.size == 0:
        return
    sample = int(bad[np.argmin(steps[bad])])
    step = int(steps[sample]) + step_offset
    names = [name for name, flag in zip(field_names, fields[sample]) if flag]
    when = f" (t = {step * dt:g})" if dt is not None else ""
    raise BlowUpError(
        f"simulation blew up: field(s) {', '.join(repr(n) for n in names)} of sample {sample} "
        f"became NaN/Inf at step {step}{when}; reduce dt or check the parameters"
    )

