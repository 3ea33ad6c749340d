"""Test-wide setup, done before any JAX operation runs.

- 8 fake CPU devices: the sharding tests (data-parallel train step, sharded dataset
  generation) need several devices; on a CPU-only machine XLA splits the host into fake ones.
- One persistent compilation cache for the whole test session: many tests (and the
  experiment binaries they start as subprocesses) compile the same programs; the cache
  turns each repeat into a disk read. It is a fresh private folder (mode 0700, made by
  `tempfile.mkdtemp`) created by the first pytest process, inherited by the xdist workers
  and subprocesses through the environment, and removed at the end of the session by
  the process that made it. A `JAX_COMPILATION_CACHE_DIR` already set is used as it is.
"""
import os
import shutil
import tempfile

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(prefix="jax-test-cache-")
    _OWN_CACHE = os.environ["JAX_COMPILATION_CACHE_DIR"]
else:
    _OWN_CACHE = None
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
os.environ.setdefault("MPLBACKEND", "Agg")

import jax  # noqa: E402  (after the environment it reads)

jax.config.update("jax_num_cpu_devices", 8)
jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
jax.config.update("jax_persistent_cache_min_compile_time_secs",
                  float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]))


def pytest_unconfigure(config):
    """Remove the session's compilation cache (only in the process that made it)."""
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)
