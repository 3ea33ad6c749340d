"""The tiny run of an experiment that a test module's tests share (a module-scoped fixture).

    @pytest.fixture(scope="module")
    def tiny_run(tmp_path_factory):
        return experiment_runs.tiny_run(tmp_path_factory, train, CONFIG)
"""
from __future__ import annotations

from lib.common import config as config_lib


def tiny_run(tmp_path_factory, train, config, *, overrides: dict | None = None,
             name: str = "run") -> tuple[str, dict]:
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
    return workdir, train.train_and_evaluate(config, workdir)
