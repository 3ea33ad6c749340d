"""Test-wide setup, before any JAX operation runs: 8 fake CPU devices, every XLA compile of
the session (tests, library jits, subprocesses, notebook kernels) with backend optimisation
off, XLA's older, faster-compiling CPU fusion emitters and one code-generation module per
program (`tests.fast_compile`), one MLIR context per thread for JAX's lowerings in the test
processes (`tests.lowering_context`), jemalloc for the processes the session starts
(`tests.allocator`), and one persistent compilation cache for the whole session.

The sharding tests (data-parallel train step, sharded dataset generation) need several
devices; on a CPU-only machine XLA can split the host into fake ones. A subprocess has one
device unless its environment says otherwise (JAX_NUM_CPU_DEVICES=8): a compile's cache key
includes the devices, so a subprocess loads what the test process compiled only with the
same 8 devices (tests/test_session_compile.py), and what other one-device subprocesses
compiled in any case.

The compilation cache (`<pytest basetemp>/jax_cache`, every compile written, however small
or quick) is shared by the xdist workers and every subprocess and notebook kernel they start
(through JAX_COMPILATION_CACHE_DIR in the environment), so a function compiled once in the
session is loaded, not compiled, by the next process that needs it. Set
JAX_COMPILATION_CACHE_DIR yourself to keep a cache across sessions (at one path: JAX's
cache key includes compile options that name the folder, so a copied or moved cache misses
every entry), or JAX_ENABLE_COMPILATION_CACHE=0 to compile everything afresh.

`-n auto` starts one xdist worker more than the cores this process may use: a worker that
waits for a subprocess, a notebook kernel or a file leaves its core to the others. On 2 idle
cores (a clean clone, `.ci/run`): 688 s with 3 workers, 766 s with 2. The test files start
slowest first, in the order of `tests/file_seconds.json` (`tests/file_order.py`).
`--cpu_log=PATH` records the CPU seconds of every test phase (`tests/cpu_account.py`).
"""
import os

from tests import allocator
from tests.fast_compile import DISABLE_ENV, FAST_XLA_FLAGS

CACHE_ENV = "JAX_COMPILATION_CACHE_DIR"
# entries are written for every compile: the tests' compiles are many and each is quick
CACHE_WRITE_ALL = {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
                   "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}

os.environ.setdefault(DISABLE_ENV, "1")   # read by JAX at import, inherited by subprocesses
_xla_flags = os.environ.get("XLA_FLAGS", "")
if os.environ[DISABLE_ENV] == "1":
    # each flag unless the user set it
    _added = [f for f in FAST_XLA_FLAGS.split() if f.split("=")[0] not in _xla_flags]
    os.environ["XLA_FLAGS"] = " ".join([_xla_flags, *_added]).strip()
os.environ.setdefault("MPLBACKEND", "Agg")
allocator.export()   # jemalloc for the workers and subprocesses started after this
for _name, _value in CACHE_WRITE_ALL.items():
    os.environ.setdefault(_name, _value)

import jax  # noqa: E402  (after the environment it reads)
import pytest  # noqa: E402

from tests import cpu_account, lowering_context  # noqa: E402
# `--cpu_log=PATH`: CPU seconds per test phase (tests/cpu_account.py)
from tests.cpu_account import (pytest_addoption, pytest_runtest_call,  # noqa: E402,F401
                               pytest_runtest_setup, pytest_runtest_teardown)

jax.config.update("jax_num_cpu_devices", 8)
lowering_context.install()    # one MLIR context per thread (tests/lowering_context.py)


def pytest_collection_modifyitems(session, config, items):
    """Slowest test files first (tests/file_order.py): the same order in every worker."""
    from tests import file_order

    by_id = {item.nodeid: item for item in items}
    items[:] = [by_id[n] for n in file_order.slowest_first(list(by_id), file_order.load())]


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: the usable cores plus one (see the module doc)."""
    from lib.common.report import usable_cores

    return usable_cores() + 1


@pytest.hookimpl(trylast=True)   # after pytest's tmp_path plugin has set up the base temp
def pytest_configure(config):
    """Point JAX (here and, through the environment, in xdist workers and subprocesses) at
    the session's compilation cache, before any test compiles. The xdist controller runs this
    before it starts the workers, which inherit the variable."""
    cpu_account.pytest_configure(config)
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False     # keep the slowest-first order (file_order)
    if not os.environ.get(CACHE_ENV):
        # pytest's own base temp folder (xdist's controller places its workers' folders in
        # it the same way), removed with it after a few sessions
        os.environ[CACHE_ENV] = str(config._tmp_path_factory.getbasetemp() / "jax_cache")
    jax.config.update("jax_compilation_cache_dir", os.environ[CACHE_ENV])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
