"""Generalisation of trained Navier–Stokes models (paper §4.3–4.5): unseen Re, an unseen
forcing, the larger [0, 4π]² domain. Each case generates its own test trajectories
(cached under data_root) and evaluates every trained run given.

    python tools/multipdenet_transfer.py \
        --workdirs=workdirs/multipdenet/navier_stokes_quick/multipdenet,workdirs/multipdenet/navier_stokes_quick/fno \
        --cases=re500,re2000,forcing_k2,domain_4pi

Writes `<workdir>/transfer/<case>.json` per run and prints a table.
"""
from __future__ import annotations

import math

from absl import app, flags

from lib.common.cli import run_tool
from lib.multipdenet.runs import evaluate_transfer

_WORKDIRS = flags.DEFINE_list("workdirs", [], "Trained Navier–Stokes run folders.")
_CASES = flags.DEFINE_list("cases", ["re500", "re2000", "forcing_k2", "domain_4pi"], "Which cases.")
_N_TEST = flags.DEFINE_integer("n_test", 5, "Test trajectories per case.")

# Overrides of config.dataset per case. One training trajectory is generated only because a
# dataset must have one; evaluation uses the test split.
CASES = {
    "re500": {"params.viscosity": 1 / 500},
    "re2000": {"params.viscosity": 1 / 2000},
    "forcing_k2": {"params.forcing_wavenumber": 2},
    # Same grid spacing on a domain twice as long: 512² -> 64² on [0, 4π]²; shorter run.
    "domain_4pi": {"params.length": 4 * math.pi, "params.n": 512, "data.duration": 1.5},
}


def main(_):
    if not _WORKDIRS.value:
        raise app.UsageError("--workdirs is required")
    rows = []
    for case in _CASES.value:
        if case not in CASES:
            raise app.UsageError(f"unknown case {case!r}; allowed: {sorted(CASES)}")
        overrides = {"data.n_train": 1, "data.n_test": _N_TEST.value, **CASES[case]}
        for workdir in _WORKDIRS.value:
            r = evaluate_transfer(workdir, overrides, case)
            rows.append((case, r["model"], r))
    print("| case | model | RMSE | HCT | horizon |")
    print("|---|---|---|---|---|")
    for case, model, r in rows:
        print(f"| {case} | {model} | {r['rmse'][0]:.3g} ± {r['rmse'][1]:.2g} | "
              f"{r['hct'][0]:.3g} ± {r['hct'][1]:.2g} | {r['horizon']:.3g} |")


if __name__ == "__main__":
    run_tool(main)
