"""Device meshes, shardings and multi-host data placement.

The same code runs on one CPU, on 8 fake CPU devices in tests, on a GPU box and on a
multi-host TPU pod: a 2-D mesh with axes ("data", "model"); batches are split along
"data"; parameters are replicated, or split along "model" by a simple size rule.
(`pjit` is today's `jax.jit` with these named shardings.)
"""
from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np
from absl import logging
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

DATA = "data"
MODEL = "model"


def make_mesh(data: int = -1, model: int = 1, devices=None) -> Mesh:
    """A ("data", "model") mesh over `devices` (default: all of them).

    `data=-1` takes what `model` leaves. A positive `data` with data × model below the device
    count spans the first data × model devices: part of a host (one GPU of eight, one of the
    tests' eight fake CPU devices; one process only). ValueError when the sizes do not fit.
    """
    if devices is None and data > 0 and model >= 1 and data * model < jax.device_count():
        if jax.process_count() > 1:
            raise ValueError(f"mesh data={data} x model={model} covers part of the "
                             f"{jax.device_count()} devices of a multi-process run; use data=-1")
        devices = jax.devices()[:data * model]
    n = len(devices) if devices is not None else jax.device_count()
    if model < 1 or n % model:
        raise ValueError(f"mesh.model = {model} must be >= 1 and divide the {n} devices")
    if data == -1:
        data = n // model
    if data < 1 or data * model != n:
        raise ValueError(
            f"mesh data={data} x model={model} = {data * model} does not match the {n} devices; "
            "use data=-1 to take all devices the model axis leaves"
        )
    return jax.make_mesh((data, model), (DATA, MODEL), axis_types=(AxisType.Auto, AxisType.Auto),
                         devices=devices)


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, P())


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Leading (batch) axis split over "data", the rest replicated."""
    return NamedSharding(mesh, P(DATA))


def param_sharding(params: Any, mesh: Mesh, min_size_to_shard: int = 2**18) -> Any:
    """Shardings for a parameter pytree by a simple rule.

    With a model axis of size 1 everything is replicated. Otherwise an array with at least
    `min_size_to_shard` elements has its largest axis divisible by the model-axis size
    split over "model"; everything else is replicated.
    """
    m = mesh.shape[MODEL]

    def rule(x):
        shape = np.shape(x)
        if m == 1 or math.prod(shape) < min_size_to_shard:
            return replicated(mesh)
        for axis in sorted(range(len(shape)), key=lambda a: -shape[a]):
            if shape[axis] % m == 0:
                spec = [None] * len(shape)
                spec[axis] = MODEL
                return NamedSharding(mesh, P(*spec))
        return replicated(mesh)

    return jax.tree.map(rule, params)


def check_batch_divisible(global_batch: int, mesh: Mesh) -> None:
    """ValueError unless the global batch splits evenly over processes and data shards."""
    d = mesh.shape[DATA]
    if global_batch % d or global_batch % jax.process_count():
        raise ValueError(
            f"global batch size {global_batch} must be divisible by the data-axis size {d} "
            f"and the process count {jax.process_count()}"
        )


def process_slice(global_batch: int) -> slice:
    """The rows of a global batch that this process loads (contiguous, equal parts)."""
    n, i = jax.process_count(), jax.process_index()
    if global_batch % n:
        raise ValueError(f"global batch {global_batch} does not split over {n} processes")
    per = global_batch // n
    return slice(i * per, (i + 1) * per)


def to_global(local_batch: Any, mesh: Mesh) -> Any:
    """Build globally sharded arrays from each process's slice of the batch.

    `local_batch` holds this process's rows (see `process_slice`); on one process it is
    the whole batch. Uses `jax.make_array_from_process_local_data`.
    """
    sharding = batch_sharding(mesh)
    return jax.tree.map(
        lambda x: jax.make_array_from_process_local_data(sharding, np.asarray(x)), local_batch
    )


def initialize_distributed(
    coordinator_address: str | None, num_processes: int | None, process_id: int | None,
    cpu_collectives: str | None = None,
) -> None:
    """`jax.distributed.initialize` for multi-host runs (TPU pods detect their own peers).

    On CPU, `cpu_collectives="gloo"` enables cross-process collectives (used by the
    two-process test on one machine).
    """
    if cpu_collectives:
        jax.config.update("jax_cpu_collectives_implementation", cpu_collectives)
    kwargs = {}
    if coordinator_address:
        kwargs = dict(
            coordinator_address=coordinator_address,
            num_processes=num_processes,
            process_id=process_id,
        )
    jax.distributed.initialize(**kwargs)
    logging.info(
        "distributed: process %d of %d, %d local / %d global devices",
        jax.process_index(), jax.process_count(), jax.local_device_count(), jax.device_count(),
    )


def is_primary() -> bool:
    """True on the process that writes metrics, plots and results (process 0)."""
    return jax.process_index() == 0
