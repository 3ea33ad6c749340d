"""3D-FLEG tests: every XLA compile of this directory with backend optimisation off.

Most of these tests' CPU time is XLA compiling (the tiny run's train steps, embeddings,
fine-tuning and the tests' own small functions); see `tests.fast_compile.fast_compiles_module`.
The training is finite under it since `lib.fleg3d.model.max_pool` and the smooth
`lib.fleg3d.scoring.normalise` (test_fleg3d_scoring.py).
"""
from tests.fast_compile import fast_compiles_module  # noqa: F401  (module-scoped autouse fixture)
