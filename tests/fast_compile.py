"""`jax.jit` for functions that tests compile themselves, with XLA's backend optimisation off.

Most of a small test's time on CPU is XLA compiling tiny functions (about 2.5 s each at the
default level, 0.3 s at level 0). The level changes how hard XLA optimises the generated
code, not what it computes, so a test's assertions are unchanged. Library code keeps the
default; a long training scan inside a test can be faster at the default level, so use this
only where the compile dominates.

    from tests.fast_compile import fast_jit
    f = fast_jit(lambda x: x ** 2)
"""
from __future__ import annotations

import functools

import jax
import pytest

FAST_COMPILE = {"xla_backend_optimization_level": 0}

fast_jit = functools.partial(jax.jit, compiler_options=FAST_COMPILE)


DISABLE_FLAG = "jax_disable_most_optimizations"


@pytest.fixture(scope="module", autouse=True)
def fast_compiles_module():
    """Every XLA compile of a test module with backend optimisation off, restored afterwards.

    The whole-program form of `fast_jit`: it also covers the library's own jits (train steps,
    samplers, inits), which is where an end-to-end test spends its CPU time. It changes how
    hard XLA optimises; the values agree to rounding, EXCEPT where finiteness depends on two
    computations agreeing to the last bit: JAX's gradient of `max` finds the maximisers by
    comparing the inputs with the max and divides by their count; with optimisation off the
    two sides can land in different kernels, no input equals the max, and the gradient is
    0/0 (3D-FLEG's PointNet pooling did this; it now gathers at the argmax,
    `lib/fleg3d/model.max_pool`). A directory that opts in must pass with it.
    Restored at module teardown, so other directories of a pytest-xdist worker compile as
    before. Use it from a directory's conftest.py:

        from tests.fast_compile import fast_compiles_module  # noqa: F401  (autouse fixture)
    """
    before = jax.config.read(DISABLE_FLAG)
    jax.config.update(DISABLE_FLAG, True)
    yield
    jax.config.update(DISABLE_FLAG, before)
