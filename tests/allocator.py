"""The test session's processes allocate memory through jemalloc when the machine has it.

A sampling profile of the whole suite (a clean clone, `.ci/run`, all processes) found
~6 % of the xdist workers' CPU inside glibc's malloc and free (`_int_malloc`,
`malloc_consolidate`, `unlink_chunk`: JAX tracing and lowering allocate and free many small
objects). jemalloc (Debian's `libjemalloc2`, which `.ci/run` installs) does the same work
in less: measured on one core, four in-process test files (MultiPDENet model, CADES
experiment, Earth model, contrastive losses) 98.1 -> 94.4 / 95.5 CPU-s, the CADES
preemption and Dynamic DETR binary tests (subprocesses) 104.5 -> 99.1 CPU-s.

`export()` puts it in LD_PRELOAD of this process's environment, which the xdist workers,
subprocesses and notebook kernels started after it inherit (the process that calls it keeps
its own allocator: with `-n auto` that is the xdist controller, which runs no tests). Nothing
is computed differently; only where memory comes from changes. It is left out when the
library is not installed (the tests run as before, on glibc's malloc), when LD_PRELOAD is
already set, or with TESTS_MALLOC=system.
"""
from __future__ import annotations

import os

CHOICE_ENV = "TESTS_MALLOC"
LIBRARY = "libjemalloc.so.2"
SEARCH = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")


def library_path() -> str | None:
    """The installed jemalloc shared library, or None."""
    for folder in SEARCH:
        path = os.path.join(folder, LIBRARY)
        if os.path.isfile(path):
            return path
    return None


def export(environ=os.environ) -> str | None:
    """Set LD_PRELOAD to jemalloc in `environ` (see the module doc); returns the path set,
    or None when it was left alone."""
    path = library_path()
    if path is None or environ.get("LD_PRELOAD") or environ.get(CHOICE_ENV) == "system":
        return None
    environ["LD_PRELOAD"] = path
    return path
