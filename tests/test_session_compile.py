"""tests/conftest.py's compile settings: one persistent compilation cache for the session,
exported to subprocesses, written by every compile; the faster CPU emitters with
optimisation off."""
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

from tests import conftest
from tests.fast_compile import DISABLE_ENV, FAST_XLA_FLAGS


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


def test_optimisation_off_comes_with_the_fast_compile_flags():
    flags = os.environ.get("XLA_FLAGS", "").split()
    for flag in FAST_XLA_FLAGS.split():
        name = flag.split("=")[0]
        user_set = any(f.startswith(name) and f != flag for f in flags)
        assert (flag in flags) == (os.environ[DISABLE_ENV] == "1") or user_set, (flag, flags)


def test_a_subprocess_loads_what_the_test_process_compiled(tmp_path):
    """A subprocess given this process's device count (JAX_NUM_CPU_DEVICES) loads a
    function compiled here from the session's cache: it writes no entry of its own for that
    function. (With its default one device the cache keys differ and it compiles afresh.)
    Other pytest workers share the cache folder, so only the probe's entries are compared."""
    if not jax.config.jax_enable_compilation_cache:
        pytest.skip("JAX_ENABLE_COMPILATION_CACHE=0: no cache to share")
    cache = os.environ[conftest.CACHE_ENV]
    (tmp_path / "session_probe.py").write_text(
        "import jax, jax.numpy as jnp\n"
        "def session_probe_fn(x):\n    return jnp.tanh(x * 1.625).sum() - 4.5\n"
        "def run():\n    return float(jax.jit(session_probe_fn)(jnp.arange(13.0)))\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import session_probe
        here = session_probe.run()
    finally:
        sys.path.remove(str(tmp_path))
    probe = lambda: {n for n in os.listdir(cache) if n.startswith("jit_session_probe_fn-")}  # noqa: E731
    before = probe()
    assert before, "the test process cached no entry for the probe"
    out = subprocess.run([sys.executable, "-c", "import jax, session_probe; "
                          "print(jax.device_count(), session_probe.run())"],
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(tmp_path),
                                  JAX_NUM_CPU_DEVICES=str(jax.device_count())),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(jax.device_count()), repr(here)]
    assert probe() == before


def test_a_notebook_kernel_optimises_only_when_asked(monkeypatch):
    from tests import notebook_utils
    monkeypatch.setenv("MPLBACKEND", "Agg")
    plain, optimised = notebook_utils.kernel_env(), notebook_utils.kernel_env(optimise=True)
    assert plain[DISABLE_ENV] == os.environ[DISABLE_ENV]          # the session's setting
    assert optimised[DISABLE_ENV] == "0"
    assert "MPLBACKEND" not in plain and "MPLBACKEND" not in optimised     # inline figures
    assert {k: v for k, v in optimised.items() if k != DISABLE_ENV} == {
        k: v for k, v in plain.items() if k != DISABLE_ENV}
