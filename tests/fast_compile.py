"""The test session compiles with XLA's backend optimisation off.

Most of a test's CPU time on CPU is XLA compiling small functions (a tiny end-to-end run
compiles a few hundred: CADES tiny, 415 compiles, 53 s of a 69 s run at the default level,
32 s of 48 s with optimisation off). The flag changes how hard XLA optimises the generated
code, not what it computes: values agree to rounding, so test assertions are unchanged.
Measured on the whole suite (2 cores, `-n auto --dist loadfile`): 2,534 s with the flag
on for 8 of 26 directories, 1,248 s with it on everywhere (issue 32 closing note).

`tests/conftest.py` sets JAX_DISABLE_MOST_OPTIMIZATIONS=1 before JAX is imported, so it
covers the tests' own jits, the library's, and every subprocess and notebook kernel a test
starts (they inherit the environment). Run with JAX_DISABLE_MOST_OPTIMIZATIONS=0 to test
the optimised compiles instead.

One caveat, found in 3D-FLEG: a computation whose finiteness depends on two kernels agreeing
to the last bit can differ. JAX's gradient of `max` finds the maximisers by comparing the
inputs with the max and divides by their count; with optimisation off the two sides can
land in different kernels, no input equals the max, and the gradient is 0/0. Gather at the
argmax instead (`lib/fleg3d/model.max_pool`).
"""
DISABLE_ENV = "JAX_DISABLE_MOST_OPTIMIZATIONS"
