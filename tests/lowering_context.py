"""The test session lowers every program of a thread into one MLIR context.

JAX lowers each new program (a jit's first call with new shapes, an operation called
outside jit) into a fresh MLIR context: creating one loads every dialect JAX uses, about
4 ms of CPU on this machine. The tests lower thousands of small programs, so contexts were
4.7 % of the whole suite's CPU (a sampling profile of a clean-clone run, all processes).
`install()` makes `jax._src.interpreters.mlir.make_ir_context` return one context per
thread, made on that thread's first lowering, instead.

The modules are the same: MLIR uniques types and attributes per context, and a context's
owner sees no difference between a new context and a reused one, so the lowered text, and
with it the compilation-cache key, is unchanged (tests/test_lowering_context.py compares
them). What a context keeps (the types and attributes uniqued in it) lives as long as its
thread: the session's few threads' worth.

Measured on one core, four in-process test files (MultiPDENet model, CADES experiment,
Earth model, contrastive losses; 933 programs): own CPU 104.0 -> 97.0 s, lowering
16.0 -> 9.4 s; in whole-suite runs the test processes' lowering went 222 -> 108-127 CPU-s.
Subprocesses and notebook kernels lower as users do (a fresh context per program), except the
preemption driver's runs (tests/common/preemption_e2e.py), which call `install()` too. Set
JAX_FRESH_MLIR_CONTEXTS=1 to keep JAX's own behaviour in the tests.

`tests/conftest.py` calls `install()` before any test runs. If a JAX version no longer has
`make_ir_context`, nothing is patched and test_lowering_context.py fails to say so.
"""
from __future__ import annotations

import os
import threading

FRESH_ENV = "JAX_FRESH_MLIR_CONTEXTS"
_PATCHED = "_tests_one_context_per_thread"


def install() -> bool:
    """Patch JAX's context factory (once); True when the per-thread context is in use."""
    from jax._src.interpreters import mlir

    if os.environ.get(FRESH_ENV) == "1" or not hasattr(mlir, "make_ir_context"):
        return False
    if getattr(mlir.make_ir_context, _PATCHED, False):
        return True
    fresh, local = mlir.make_ir_context, threading.local()

    def make_ir_context():
        context = getattr(local, "context", None)
        if context is None:
            context = local.context = fresh()
        return context

    setattr(make_ir_context, _PATCHED, True)
    make_ir_context.fresh = fresh
    mlir.make_ir_context = make_ir_context
    return True


def installed() -> bool:
    """Whether JAX's lowering uses the per-thread context in this process."""
    from jax._src.interpreters import mlir

    return getattr(getattr(mlir, "make_ir_context", None), _PATCHED, False)
