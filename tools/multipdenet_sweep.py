"""Run MultiPDENet, its baselines and its ablations on one or more systems, one workdir each.

    python tools/multipdenet_sweep.py --systems=burgers,navier_stokes --sweep=main --variant=quick
    python tools/multipdenet_sweep.py --systems=burgers --sweep=ablations

Each run is `experiments/multipdenet/main.py` in a subprocess (so a crash or a blow-up in
one run does not stop the others) with the overrides its sweep yields, in
`<root>/<system>_<variant>/<run name>/`. A run whose workdir already has results.json is
skipped, and an interrupted one resumes from its checkpoints. Finally the finished runs are
collected into `<root>/collected_<variant>/`, which `tools/results.py --paper=multipdenet`
renders.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from absl import flags, logging

from lib.common.cli import run_tool
from lib.multipdenet.report import write_collection
from lib.multipdenet.sweeps import command, runs

_SYSTEMS = flags.DEFINE_list("systems", ["burgers"], "burgers, navier_stokes, gray_scott, kdv.")
_SWEEP = flags.DEFINE_enum("sweep", "main", ["main", "ablations", "all"],
                           "main: MultiPDENet + FNO + UNet + classical solver; ablations: the "
                           "paper's ablations of MultiPDENet; all: both.")
_VARIANT = flags.DEFINE_string("variant", "quick", "Config variant (tiny, quick, paper).")
_ROOT = flags.DEFINE_string("root", "workdirs/multipdenet", "Where the run folders go.")
_ONLY = flags.DEFINE_list("only", [], "Run only these run names.")
_DRY = flags.DEFINE_bool("dry_run", False, "Print the commands, run nothing.")

def main(_):
    failed = []
    for system in _SYSTEMS.value:
        for name, overrides in runs(system, _SWEEP.value):
            if _ONLY.value and name not in _ONLY.value:
                continue
            workdir = os.path.join(_ROOT.value, f"{system}_{_VARIANT.value}", name)
            if os.path.exists(os.path.join(workdir, "results.json")):
                logging.info("skip %s/%s: results.json exists", system, name)
                continue
            cmd = command(system, _VARIANT.value, workdir, overrides)
            print(" ".join(cmd), flush=True)
            if _DRY.value:
                continue
            t0 = time.time()
            os.makedirs(workdir, exist_ok=True)
            with open(os.path.join(workdir, "log.txt"), "a") as log:
                rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
            logging.info("%s/%s: exit %d after %.0f s", system, name, rc, time.time() - t0)
            if rc:
                failed.append(f"{system}/{name}")
    if not _DRY.value:
        print("collected:", write_collection(_ROOT.value, _VARIANT.value))
    if failed:
        print("failed runs (see their log.txt):", ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    run_tool(main)
