"""tests/lowering_context.py: one MLIR context per thread for the session's lowerings, and
the same modules as JAX's fresh contexts give."""
import os
import threading

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.interpreters import mlir
from jax.sharding import NamedSharding, PartitionSpec as P

from tests import lowering_context


def _programs():
    """Lowered texts (with locations) of programs built afresh: a sharded jit with a scan and
    a custom derivative, the gradient of a Flax layer, and one operation outside jit."""
    mesh = jax.make_mesh((jax.device_count(),), ("data",))

    @jax.custom_jvp
    def soft(x):
        return jnp.log1p(jnp.exp(x))

    soft.defjvp(lambda p, t: (soft(p[0]), jax.nn.sigmoid(p[0]) * t[0]))

    def scanned(x):
        return jax.lax.scan(lambda c, r: (c + soft(r).sum(), c), 0.0, x)

    x = jax.device_put(np.arange(32.0).reshape(4, 8), NamedSharding(mesh, P(None, "data")))
    dense = nn.Dense(3)
    params = dense.init(jax.random.key(0), jnp.ones((2, 4)))
    loss = lambda p, v: jnp.sum(dense.apply(p, v) ** 2)
    return [jax.jit(scanned).lower(x).as_text(debug_info=True),
            jax.jit(jax.grad(loss)).lower(params, jnp.ones((2, 4))).as_text(debug_info=True),
            jax.jit(lambda v: jnp.cumsum(v)).lower(jnp.ones(5)).as_text(debug_info=True)]


@pytest.mark.skipif(os.environ.get(lowering_context.FRESH_ENV) == "1",
                    reason="JAX_FRESH_MLIR_CONTEXTS=1: the session lowers as JAX does")
def test_the_session_lowers_into_one_context_per_thread():
    assert lowering_context.installed(), (
        "jax._src.interpreters.mlir.make_ir_context is gone or unpatched: tests/conftest.py "
        "could not install tests/lowering_context.py (update it for this JAX)")
    here = mlir.make_ir_context()
    assert mlir.make_ir_context() is here
    other = []
    thread = threading.Thread(target=lambda: other.extend([mlir.make_ir_context()] * 2))
    thread.start()
    thread.join()
    assert other[0] is other[1] and other[0] is not here


def test_modules_lowered_in_a_reused_context_equal_fresh_contexts_modules(monkeypatch):
    if not lowering_context.installed():
        pytest.skip("the session lowers as JAX does (JAX_FRESH_MLIR_CONTEXTS=1)")
    texts = {}
    for mode in ("shared", "shared again", "fresh"):   # one call site: the same locations
        if mode == "fresh":
            monkeypatch.setattr(mlir, "make_ir_context", mlir.make_ir_context.fresh)
        texts[mode] = _programs()
    assert texts["shared"] == texts["shared again"] == texts["fresh"]
    fresh = texts["fresh"]
    assert all("stablehlo" in text or "func.func" in text for text in fresh)
