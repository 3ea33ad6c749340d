"""The notebook beside the experiment runs in a Jupyter kernel from its own folder, shows its
figures and predicts sensibly.

It is executed through a real `python3` kernel (nbclient) with the notebook's folder as the
working directory, as Jupyter opens it; a probe cell after the last one reads the numbers.
"""
import os

import numpy as np
import pytest

from tests.notebook_utils import error_outputs, image_count, module_run, notebook_path

pytestmark = pytest.mark.slow   # a kernel, JAX compiles and a short training run

NOTEBOOK = notebook_path("multipdenet")

PROBE = """{
    "cwd": os.getcwd(), "workdir_is_none": WORKDIR is None,
    "train_steps": int(results["train_steps"]), "num_steps": int(config.train.num_steps),
    "step": int(step), "results_json": os.path.isfile(os.path.join(workdir, "results.json")),
    "pred_shape": list(pred.shape), "truth_shape": list(truth.shape),
    "test_shape": list(test[0, 1:].shape), "finite": bool(np.all(np.isfinite(pred))),
    "correlation": [float(c) for c in correlation],
    "pred_moved": float(np.abs(pred[-1] - test[trajectory, 0]).max()),
    "truth_moved": float(np.abs(truth[-1] - test[trajectory, 0]).max()),
}"""


# XLA backend optimisation off in the kernel: its train step compiles for minutes otherwise
# (kernel CPU 113 s -> 78 s)
run = module_run(NOTEBOOK, PROBE)


def test_notebook_runs_from_its_folder_and_shows_figures(run):
    nb, probe = run
    assert error_outputs(nb) == []
    assert probe["cwd"] == os.path.dirname(NOTEBOOK)
    assert image_count(nb) == 2          # truth/prediction/error grid, correlation curve


def test_notebook_trains_and_restores_the_tiny_run(run):
    _, p = run
    assert p["workdir_is_none"]
    assert p["train_steps"] == p["num_steps"]
    assert p["step"] == p["num_steps"]             # restored the final checkpoint
    assert p["results_json"]


def test_notebook_prediction_follows_the_truth(run):
    _, p = run
    assert p["pred_shape"] == p["truth_shape"] == p["test_shape"]
    assert p["finite"]
    corr = np.asarray(p["correlation"])
    assert corr.shape == (p["truth_shape"][0],)
    assert corr[0] > 0.9, corr
    # the prediction moved away from the initial state, like the truth did
    assert p["pred_moved"] > 0.1 * p["truth_moved"], p
