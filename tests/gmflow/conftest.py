"""GMFlow tests: every XLA compile of this directory with backend optimisation off.

Almost all of these tests' CPU time is XLA compiling (the experiment's train steps and
evaluations, and the tests' own small functions); see `tests.fast_compile.fast_compiles_module`.
"""
from tests.fast_compile import fast_compiles_module  # noqa: F401  (module-scoped autouse fixture)
