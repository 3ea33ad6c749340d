"""Pin a benchmark process to fixed CPU cores before JAX starts its CPU backend.

Wall-time ratios between programs are only comparable when every program gets the same
cores: on a small machine XLA's thread pool otherwise spreads each program over whatever
is free at that moment. `pin` restricts the process to the given cores (Linux
`sched_setaffinity`) and, for a single core, also turns off XLA's multi-threaded Eigen
kernels (matmuls, convolutions), which could only time-share that core.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

_SINGLE_THREAD_FLAGS = ("--xla_cpu_multi_thread_eigen=false",)


FIRST = "first"   # a --cores value: the lowest-numbered core this process may run on


def parse(values: Sequence[str]) -> list[int]:
    """A `--cores` flag's values as core ids: integers, or "first" for the lowest core in
    `os.sched_getaffinity` (the default of the bench tools, so a process started under
    `taskset -c 1` pins to core 1). Raises ValueError naming a value that is neither."""
    cores = []
    for v in values:
        if v == FIRST:
            cores.append(min(os.sched_getaffinity(0)))
        elif v.strip().isdigit():
            cores.append(int(v))
        else:
            raise ValueError(f"core {v!r} is neither a core id nor {FIRST!r}")
    return cores


def pin(cores: Sequence[int]) -> str:
    """Restrict this process to `cores` (ids as `os.sched_getaffinity` lists them) and, for
    one core, XLA's Eigen kernels to one thread; returns a phrase for a results note, e.g.
    "pinned to core 0, XLA Eigen single-threaded". An empty `cores` pins nothing ("not pinned").

    Raises RuntimeError if a JAX backend already exists (its thread pool is sized then, so
    the flags would not apply) and ValueError for a core the process may not use.
    """
    if not cores:
        return "not pinned"
    allowed = os.sched_getaffinity(0)
    bad = sorted(set(cores) - allowed)
    if bad:
        raise ValueError(f"cores {bad} are not available to this process; available: {sorted(allowed)}")
    from jax._src import xla_bridge  # noqa: PLC0415  (jax has no public test for this)
    if xla_bridge.backends_are_initialized():
        raise RuntimeError("pin() must run before the first JAX computation: the CPU backend "
                           "has already sized its thread pool")
    os.sched_setaffinity(0, set(cores))
    if len(set(cores)) == 1:
        flags = os.environ.get("XLA_FLAGS", "").split()
        os.environ["XLA_FLAGS"] = " ".join(flags + [f for f in _SINGLE_THREAD_FLAGS if f not in flags])
        return f"pinned to core {cores[0]}, XLA Eigen single-threaded"
    return f"pinned to cores {', '.join(map(str, sorted(set(cores))))}"
