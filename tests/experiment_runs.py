"""The tiny run of an experiment that a test module's tests share (a module-scoped fixture).

    @pytest.fixture(scope="module")
    def tiny_run(tmp_path_factory):
        return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)

`fast_compile=True` compiles the run with XLA's backend optimisation off
(`tests.fast_compile`). It changes how hard XLA optimises, not what is computed, so values
agree to rounding; it pays only where compiling dominates the run's CPU time (measured: a run
that trains or samples for long costs more unoptimised), and suits only a module where no
later test compares a recomputation with the run's numbers bit for bit (the flag is global
and not part of JAX's compile cache key, so it is on for the run only and then restored).
"""
from __future__ import annotations

import contextlib

import jax

from lib.common import config as config_lib
from tests.fast_compile import DISABLE_FLAG


@contextlib.contextmanager
def fast_compiles(enabled: bool = True):
    """Every XLA compile inside the block with backend optimisation off (when `enabled`)."""
    before = jax.config.read(DISABLE_FLAG)
    jax.config.update(DISABLE_FLAG, enabled or before)
    try:
        yield
    finally:
        jax.config.update(DISABLE_FLAG, before)


def tiny_run(tmp_path_factory, train, config, *, overrides: dict | None = None,
             name: str = "run", fast_compile: bool = False) -> tuple[str, dict]:
    """(workdir, results) of `train.train_and_evaluate(config, workdir)` in a new folder.

    train: the experiment's train module; config: a ConfigDict or "path.py:variant" (loaded
    with lib.common.config, then `overrides` {dotted key: value} applied); name: the
    folder's prefix under pytest's base temp.
    """
    if isinstance(config, str):
        config = config_lib.load_config(config)
    if overrides:
        config = config_lib.apply_overrides(config, overrides)
    workdir = str(tmp_path_factory.mktemp(name))
    with fast_compiles(fast_compile):
        return workdir, train.train_and_evaluate(config, workdir)
