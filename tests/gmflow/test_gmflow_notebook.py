"""The GMFlow notebook runs in a Jupyter kernel from its own folder, shows its figure, and its
few-step samples show what the paper claims: GMFlow is closer to the checkerboard than flow
matching at NFE 1 and 2.

Executed through a real `python3` kernel (nbclient) with the notebook's folder as the
working directory; a probe cell after the last one reads the numbers.
"""
import os

import numpy as np
import pytest

from tests.notebook_utils import error_outputs, image_count, module_run, notebook_path

pytestmark = pytest.mark.slow   # a kernel, JAX compiles and a short training run

NOTEBOOK = notebook_path("gmflow")

PROBE = """{
    "cwd": os.getcwd(), "nfes": list(NFES), "steps": int(config.train.num_steps),
    "swd": {m: [float(v) for v in s] for m, s in swd.items()},
    "in_square": {m: [float(v) for v in s] for m, s in in_square.items()},
    "finite": {m: [bool(np.isfinite(x).all()) for x in xs] for m, xs in rows.items()},
    "shapes": {m: [list(x.shape) for x in xs] for m, xs in rows.items()},
    "target_in_square": float(toys.in_white_square(target).mean()),
    "floor": [float(v) for v in floor],
}"""


run = module_run(NOTEBOOK, PROBE, optimise=True)   # a training loop: see notebook_utils


def test_notebook_runs_from_its_folder_and_shows_the_grid(run):
    nb, probe = run
    assert error_outputs(nb) == []
    assert probe["cwd"] == os.path.dirname(NOTEBOOK)
    assert image_count(nb) == 1


def test_notebook_samples_every_nfe_with_both_models(run):
    _, p = run
    assert p["nfes"] == [1, 2, 4, 8]
    for model in ("gmflow", "flow matching"):
        assert p["shapes"][model] == [[4000, 2]] * 4
        assert all(p["finite"][model])
    assert p["target_in_square"] == 1.0


def test_gmflow_beats_flow_matching_with_few_steps(run):
    _, p = run
    gm, fm = np.asarray(p["swd"]["gmflow"]), np.asarray(p["swd"]["flow matching"])
    assert np.all(gm[:2] < fm[:2]), (gm, fm)             # NFE 1, 2: the paper's Fig. 2 claim
    assert p["in_square"]["gmflow"][0] > p["in_square"]["flow matching"][0], p["in_square"]
    assert fm[-1] < fm[0], fm                            # Euler improves with more steps


def test_the_noise_floor_is_printed_and_below_one_step_flow_matching(run):
    nb, p = run
    floor = np.asarray(p["floor"])
    assert floor.shape == (3,) and np.all(floor > 0), floor   # independent draws differ
    assert floor.max() < p["swd"]["flow matching"][0], (floor, p["swd"])
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "noise floor (target vs 3 fresh draws" in text
