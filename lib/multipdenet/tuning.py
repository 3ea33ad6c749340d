"""Where `fd4_tuned`'s stencil knobs live and how they are read (no JAX: config files use it).

The tuning file (`tools/bench/multipdenet_front.py --tune_fd4` writes it) holds
`{"theta": {"<n>": {"<steps>": θ}}, "dispersion": {...: φ}}`: per grid n² and steps per
truth frame, the hyperviscosity θ on δ⁴ in ∂xx and the dispersion correction φ of ∂x.
"""
from __future__ import annotations

import os

from lib.common import workdir as wd

TUNING_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "experiments", "multipdenet", "fd4_tuned.json")


def tuned_knobs(n: int, steps: int, path: str = TUNING_FILE) -> tuple[float, float]:
    """`fd4_tuned`'s (θ, φ) on an `n`² grid at `steps` steps per frame; ValueError naming the
    file when it has none."""
    try:
        tables = wd.read_json(path)
        return tuple(float(tables[k][str(n)][str(steps)]) for k in ("theta", "dispersion"))
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: no tuned stencil for {n}² at {steps} steps per frame ({e!r}); "
                         f"run tools/bench/multipdenet_front.py --tune_fd4") from None
