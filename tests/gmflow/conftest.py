"""GMFlow tests: every XLA compile of this directory with backend optimisation off.

Almost all of these tests' time on CPU is XLA compiling (the experiment's train steps,
samplers and inits, and the tests' own small functions), not running the compiled code.
`jax_disable_most_optimizations` is the whole-program form of `tests.fast_compile.fast_jit`
(XLA backend optimisation level 0, no expensive LLVM passes): it changes how hard XLA
optimises the generated code, not what it computes, so every assertion and tolerance is the
one the tests had at the default level. Set per test module and restored afterwards, so the
other directories of a pytest-xdist worker compile as before.
"""
import jax
import pytest

FLAG = "jax_disable_most_optimizations"


@pytest.fixture(scope="module", autouse=True)
def fast_compiles():
    before = jax.config.read(FLAG)
    jax.config.update(FLAG, True)
    yield
    jax.config.update(FLAG, before)
