"""End-to-end preemption checks: run an experiment's command line in a subprocess with a
deterministic SIGTERM, then rerun the same command.

Run as a script, this file is the driver: it installs the hooks named on its command line,
then calls `lib.common.cli.run(<module>.train_and_evaluate, argv)` exactly as a `main.py`
does, so the exit status is the real one. A hook sends a real SIGTERM to the process itself
at a fixed point (no sleeps, no polling):

    train:K          while the first `train_loop.train` call prepares step K (0-based), i.e.
                     inside the train loop; K + 1 steps complete
    call:MOD:ATTR    when `MOD.ATTR` is first called (before it runs), e.g. an evaluation
                     function called after training

    python tests/common/preemption_e2e.py MODULE HOOK|- [--config=... --workdir=... ...]

All runs share a JAX compilation cache (`cache_dir`: the test session's, see
tests/conftest.py), so a rerun does not compile again, and compile with XLA's optimisation
off (`tests.fast_compile`: the same setting for every run, so the runs compute the same
numbers; most of a tiny run's time is compiling), and lower into one MLIR context per thread
as the test processes do (`tests.lowering_context`).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# results.json keys that measure time or machine, or say where a run resumed: they differ
# between any two runs and are left out of the comparison
VOLATILE = ("machine", "resumed_from")


def comparable(obj):
    """`obj` without the keys of `VOLATILE` and the wall-clock measurements (keys ending
    in `_s` or `_seconds`, `steps_per_sec`), at any depth."""
    if isinstance(obj, dict):
        return {k: comparable(v) for k, v in obj.items()
                if k not in VOLATILE and not k.endswith(("_s", "_seconds", "steps_per_sec"))}
    if isinstance(obj, list):
        return [comparable(v) for v in obj]
    return obj


def run(module: str, hook: str | None, argv: list[str], cache_dir: str,
        timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the driver on `module` with `hook` (None: an uninterrupted run)."""
    # here, not at the top: the driver (this file as a script) has no `tests` package on its path
    from tests.fast_compile import FAST_XLA_FLAGS

    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_COMPILATION_CACHE_DIR=cache_dir, MPLBACKEND="Agg", XLA_FLAGS=FAST_XLA_FLAGS,
               JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
               JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
    cmd = [sys.executable, os.path.abspath(__file__), module, hook or "-", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)


def results(workdir: str) -> dict:
    """results.json of `workdir` with the workdir's path written as <workdir>."""
    with open(os.path.join(workdir, "results.json")) as f:
        return json.loads(f.read().replace(os.path.abspath(workdir), "<workdir>"))


def leftovers(workdir: str) -> list[str]:
    """Temporary files of interrupted atomic writes (`.tmp_*`) anywhere under `workdir`."""
    return [os.path.join(d, f) for d, _, files in os.walk(workdir) for f in files
            if f.startswith(".tmp")]


def base_fixture(module: str, argv: list[str]):
    """A module-scoped pytest fixture `base`: (cache_dir, results.json) of one uninterrupted
    run of `module` with `argv`, the reference of that test module's preempted-then-resumed
    runs, which share its compilation cache (the session's when tests/conftest.py set one).
    In a test module: `base = e2e.base_fixture(...)`."""
    import pytest        # here, not at the top: the driver (this file as a script) needs none

    @pytest.fixture(scope="module", name="base")
    def base(tmp_path_factory):
        cache = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(tmp_path_factory.mktemp("jax_cache"))
        workdir = str(tmp_path_factory.mktemp("full"))
        proc = run(module, None, [*argv, f"--workdir={workdir}"], cache)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return cache, results(workdir)

    return base


def check_preempted_then_resumed(module: str, hook: str, argv: list[str], workdir: str,
                                 cache_dir: str, uninterrupted: dict) -> str:
    """Run with `hook` (exit 0, "preempted:" on stderr, no results.json, no half-written
    file), then the same command again (its results.json equals `uninterrupted` up to
    timings); returns the first run's stderr."""
    cmd = [*argv, f"--workdir={workdir}"]
    first = run(module, hook, cmd, cache_dir)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "preempted: " in first.stderr, first.stderr[-3000:]
    assert not os.path.exists(os.path.join(workdir, "results.json"))
    assert leftovers(workdir) == []
    rerun = run(module, None, cmd, cache_dir)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert comparable(results(workdir)) == comparable(uninterrupted)
    return first.stderr


# ----------------------------------------------------------------------------- driver


def _sigterm() -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def _install(hook: str) -> None:
    import importlib

    kind, _, arg = hook.partition(":")
    if kind == "train":
        from lib.common import train_loop

        at, inner, fired = int(arg), train_loop.train, []

        def train(task, *args, **kwargs):
            if fired:
                return inner(task, *args, **kwargs)
            fired.append(True)

            def batch_fn(step, rows):
                if step == at:
                    _sigterm()
                return task.batch_fn(step, rows)

            return inner(task._replace(batch_fn=batch_fn), *args, **kwargs)

        train_loop.train = train
    elif kind == "call":
        mod_name, _, attr = arg.rpartition(":")
        mod = importlib.import_module(mod_name)
        inner, fired = getattr(mod, attr), []

        def wrapped(*args, **kwargs):
            if not fired:
                fired.append(True)
                _sigterm()
            return inner(*args, **kwargs)

        setattr(mod, attr, wrapped)
    else:
        raise SystemExit(f"unknown hook {hook!r}: use train:K or call:MODULE:ATTR")


def main() -> None:
    sys.path.insert(0, ROOT)
    import importlib

    import jax

    jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.config.update("jax_disable_most_optimizations", True)
    from lib.common import cli
    from tests import lowering_context

    lowering_context.install()       # as in the test processes: the same modules, made faster

    module, hook, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    experiment = importlib.import_module(module)
    if hook != "-":
        _install(hook)
    cli.run(experiment.train_and_evaluate, ["main.py", *rest])


if __name__ == "__main__":
    main()
