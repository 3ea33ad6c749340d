"""Every XLA compile of the dynamic_detr tests with backend optimisation off (library jits
too: inits, train steps, evaluation); see `tests.fast_compile.fast_compiles_module`."""
from tests.fast_compile import fast_compiles_module  # noqa: F401  (module-scoped autouse fixture)
