"""Render a SWE-Gym run's results.json as the README's results block.

    python tools/swe_gym_results.py --workdir=workdirs/swe_gym_quick \
        --readme=experiments/swe_gym/README.md --tag=quick

Without --readme the tables are printed only (`lib.common.report.results_tool`).
"""
from __future__ import annotations

from lib.common.report import results_tool
from lib.swe_gym.report import render

if __name__ == "__main__":
    results_tool("swe_gym", render)
