"""Test-wide setup, before any JAX operation runs: 8 fake CPU devices, and every XLA
compile of the session (tests, library jits, subprocesses, notebook kernels) with backend
optimisation off (`tests.fast_compile`).

The sharding tests (data-parallel train step, sharded dataset generation) need several
devices; on a CPU-only machine XLA can split the host into fake ones.
"""
import os

from tests.fast_compile import DISABLE_ENV

os.environ.setdefault(DISABLE_ENV, "1")   # read by JAX at import, inherited by subprocesses
os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402  (after the environment it reads)

jax.config.update("jax_num_cpu_devices", 8)
