"""Spurious correlations in ridge regression: theory against simulation, end to end.

Nothing is trained by gradient descent: every model is a closed-form ridge fit. The parts
(gaussian, rf, digits) are `lib/spurious_ridge/parts.py`; the run writes config.json,
results.json, results.md (the tables) and plots/*.png. Rerunning on the same workdir
recomputes (a few minutes at most) and overwrites.
"""
from __future__ import annotations

import os
import time

import numpy as np
from absl import logging

from lib.common import config as config_lib, report as common_report, workdir as wd
from lib.spurious_ridge import config_schema, parts, report

validate = config_schema.validate


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md and plots/ to `workdir`."""
    validate(config)
    wd.prepare(workdir, config_lib.to_json_dict(config))
    plot_dir = os.path.join(workdir, wd.PLOTS) if config.eval.plots else None
    t0 = time.perf_counter()
    runners = {"gaussian": parts.run_gaussian, "rf": parts.run_rf, "digits": parts.run_digits}
    results: dict = {}
    for part in config.parts:
        start = time.perf_counter()
        results[part] = runners[part](config, plot_dir)
        results[part]["wall_s"] = time.perf_counter() - start
        logging.info("%s done in %.1f s", part, results[part]["wall_s"])
    results["targets"] = report.targets(results)
    results["wall_s"] = time.perf_counter() - t0
    results["machine"] = common_report.machine()
    results = _jsonable(results)
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    return obj
