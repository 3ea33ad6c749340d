"""tools/bench/pinning.py: the process's cores and XLA's flags, in a fresh interpreter."""
import os
import subprocess
import sys

import pytest

from tools.bench import pinning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_one_core_pins_the_process_and_single_threads_eigen_before_jax_starts():
    core = min(os.sched_getaffinity(0))
    out = _python(f"from tools.bench import pinning; print(pinning.pin([{core}]))\n"
                  "import os, jax.numpy as jnp; print(float(jnp.ones(3).sum()))\n"
                  "print(sorted(os.sched_getaffinity(0)), os.environ['XLA_FLAGS'])")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"pinned to core {core}, XLA Eigen single-threaded"
    assert lines[1] == "3.0"                                   # XLA accepted the flag
    assert lines[2] == f"[{core}] --xla_cpu_multi_thread_eigen=false"


def test_pin_refuses_after_the_backend_started_and_a_core_it_may_not_use():
    out = _python("import jax.numpy as jnp; jnp.ones(1)\nfrom tools.bench import pinning\n"
                  "pinning.pin([min(__import__('os').sched_getaffinity(0))])")
    assert out.returncode != 0 and "before the first JAX computation" in out.stderr
    with pytest.raises(ValueError, match=r"cores \[100000\] are not available"):
        pinning.pin([100000])
    assert pinning.pin([]) == "not pinned"


def test_parse_reads_core_ids_and_first_as_the_lowest_allowed_core():
    assert pinning.parse([pinning.FIRST]) == [min(os.sched_getaffinity(0))]
    assert pinning.parse(["1", "0"]) == [1, 0] and pinning.parse([]) == []
    with pytest.raises(ValueError, match="core 'one' is neither a core id nor 'first'"):
        pinning.parse(["one"])
