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

FAST_COMPILE = {"xla_backend_optimization_level": 0}

fast_jit = functools.partial(jax.jit, compiler_options=FAST_COMPILE)
