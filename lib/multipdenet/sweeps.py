"""The MultiPDENet sweeps: generators of (run name, config overrides), and their commands."""
from __future__ import annotations

import os
import sys
from typing import Iterator

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main_sweep(system: str) -> Iterator[tuple[str, dict]]:
    """MultiPDENet against the baselines of the issue (same data, same harness)."""
    yield "multipdenet", {}
    yield "coarse_solver", {"model.name": "coarse_solver"}
    yield "fno", {"model.name": "fno"}
    if system != "kdv":
        yield "unet", {"model.name": "unet"}


def ablation_sweep(system: str) -> Iterator[tuple[str, dict]]:
    """The ablations of notes §1.1 (ICLR version, Table 3)."""
    del system
    yield "abl_frozen_filters", {"model.filter_mode": "frozen"}
    yield "abl_free_filters", {"model.filter_mode": "free"}
    yield "abl_no_minn", {"model.micro_net": "none"}
    yield "abl_no_mann", {"model.macro_net": "none"}
    yield "abl_euler", {"model.integrator": "euler"}
    yield "abl_no_corrector", {"model.corrector": "none"}


def runs(system: str, sweep: str) -> Iterator[tuple[str, dict]]:
    if sweep in ("main", "all"):
        yield from main_sweep(system)
    if sweep in ("ablations", "all"):
        yield from ablation_sweep(system)


def command(system: str, variant: str, workdir: str, overrides: dict) -> list[str]:
    cmd = [sys.executable, os.path.join(ROOT_DIR, "experiments", "multipdenet", "main.py"),
           f"--config={os.path.join(ROOT_DIR, 'configs', 'multipdenet', system + '.py')}:{variant}",
           f"--workdir={workdir}"]
    return cmd + [f"--config.{k}={v}" for k, v in overrides.items()]
