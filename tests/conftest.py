"""Test-wide setup: 8 fake CPU devices, set before any JAX operation runs.

The sharding tests (data-parallel train step, sharded dataset generation) need several
devices; on a CPU-only machine XLA can split the host into fake ones. This must happen
before the first JAX computation, so it lives here, at the top of the test session.
"""
import os

import jax

jax.config.update("jax_num_cpu_devices", 8)
os.environ.setdefault("MPLBACKEND", "Agg")
