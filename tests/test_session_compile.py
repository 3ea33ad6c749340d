"""tests/conftest.py's compile settings: one persistent compilation cache for the session,
exported to subprocesses, written by every compile; the faster CPU emitters with
optimisation off."""
import os

import jax
import jax.numpy as jnp

from tests import conftest
from tests.fast_compile import DISABLE_ENV, LEGACY_EMITTERS


def test_the_session_cache_is_in_the_environment_and_every_compile_is_written():
    cache = os.environ[conftest.CACHE_ENV]
    assert jax.config.jax_compilation_cache_dir == cache
    for name, value in conftest.CACHE_WRITE_ALL.items():
        assert os.environ[name] == value                # what a subprocess's JAX reads
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0
    entries = lambda: set(os.listdir(cache)) if os.path.isdir(cache) else set()
    before = entries()
    # a function no other test compiles: a quick compile, written all the same (nothing is
    # written when JAX_ENABLE_COMPILATION_CACHE=0 turned the cache off)
    jax.jit(lambda x: jnp.cumsum(x * 3.25) - 17.5)(jnp.arange(11.0)).block_until_ready()
    assert bool(entries() - before) == jax.config.jax_enable_compilation_cache


def test_optimisation_off_comes_with_the_legacy_emitters():
    flags = os.environ.get("XLA_FLAGS", "")
    assert (LEGACY_EMITTERS in flags) == (os.environ[DISABLE_ENV] == "1") or (
        "xla_cpu_use_fusion_emitters" in flags)                       # set by the user
