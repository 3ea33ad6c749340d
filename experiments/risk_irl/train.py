"""Risk-sensitive IRL end to end: CATY-UL and TRACTOR-UL on every setting of the paper.

    config -> validate -> for each part in config.parts (lib/risk_irl/parts.py):
      investment, participants, random, multi_env
    -> workdir: config.json, parts/<part>.json, results.json, results.md, plots/*.png

Each part is a stage (`lib.common.stages`, folder `parts/`): a finished part is reused when
the same command is run again (the workdir refuses a different config).
"""
from __future__ import annotations

import os
import time

from lib.common import config as config_lib
from lib.common import paths
from lib.common import report as common_report
from lib.common import workdir as wd
from lib.common.stages import Stages
from lib.data import public
from lib.risk_irl import config_schema, data, report
from lib.risk_irl.parts import RUNNERS

validate = config_schema.validate
PARTS_DIR = "parts"


def check_participant_files(config) -> None:
    """Fail before any compute when the participants' files are absent or not the pinned ones."""
    data_dir = paths.resolve(config.participants.data_dir)
    if data_dir == public.default_dir("risk_irl"):
        try:
            public.check("risk_irl", data_dir)
        except public.DataError as err:
            raise config_lib.ConfigError(str(err)) from None
    for name in (data.MDP_FILE, data.SG_FILE):
        path = os.path.join(data_dir, name)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"participants file {path!r} not found; set --config.participants.data_dir "
                "to the directory holding data_MDP.csv and data_SG.csv, or drop "
                "'participants' from --config.parts")


def _run_part(part: str, config, plot_dir):
    def fn(_stage_dir):
        t0 = time.perf_counter()
        res = dict(RUNNERS[part](config, plot_dir))
        res["part_wall_s"] = time.perf_counter() - t0
        return res
    return fn


def train_and_evaluate(config, workdir: str) -> dict:
    """Run the parts of `config`; write results.json, results.md, parts/ and plots/ to `workdir`."""
    validate(config)
    if "participants" in config.parts:
        check_participant_files(config)
    wd.prepare(workdir, config_lib.to_json_dict(config))
    plot_dir = os.path.join(workdir, wd.PLOTS) if config.eval.plots else None
    stages = Stages(workdir, PARTS_DIR)
    t0 = time.perf_counter()
    results = {part: stages.run(part, _run_part(part, config, plot_dir))
               for part in config.parts}
    results["targets"] = report.targets(results, config)
    results["machine"] = common_report.machine()
    results["wall_s"] = time.perf_counter() - t0
    results["parts_wall_s"] = {p: results[p]["part_wall_s"] for p in config.parts}
    wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
    wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results
