"""The colab notebook beside the experiment runs top to bottom and predicts sensibly.

Its code cells are executed in order in one namespace (no Jupyter kernel), with
matplotlib's Agg backend, from the repository root as the notebook expects.
"""
import json
import os

import matplotlib
import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOK = os.path.join(ROOT, "experiments", "multipdenet", "notebook.ipynb")


def _code_cells(path):
    with open(path) as f:
        notebook = json.load(f)
    assert notebook["nbformat"] == 4
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.fixture(scope="module")
def namespace():
    os.environ["MPLBACKEND"] = "Agg"
    matplotlib.use("Agg")
    cwd = os.getcwd()
    os.chdir(ROOT)
    ns = {"__name__": "__notebook__"}
    try:
        for i, source in enumerate(_code_cells(NOTEBOOK)):
            assert not any(line.lstrip().startswith(("!", "%")) for line in source.splitlines()), \
                f"code cell {i} uses shell or magic syntax"
            exec(compile(source, f"{NOTEBOOK}[code cell {i}]", "exec"), ns)  # noqa: S102
    finally:
        os.chdir(cwd)
        import matplotlib.pyplot as plt
        plt.close("all")
    return ns


def test_notebook_trains_and_restores_the_tiny_run(namespace):
    ns = namespace
    assert ns["WORKDIR"] is None
    assert ns["results"]["train_steps"] == ns["config"].train.num_steps
    assert ns["step"] == ns["config"].train.num_steps  # restored the final checkpoint
    assert os.path.isfile(os.path.join(ns["workdir"], "results.json"))


def test_notebook_prediction_follows_the_truth(namespace):
    pred, truth, corr = namespace["pred"], namespace["truth"], namespace["correlation"]
    assert pred.shape == truth.shape == namespace["test"][0, 1:].shape
    assert np.all(np.isfinite(pred))
    assert corr.shape == (truth.shape[0],)
    assert corr[0] > 0.9, corr
    # the prediction moved away from the initial state, like the truth did
    u0 = namespace["test"][namespace["trajectory"], 0]
    assert np.abs(pred[-1] - u0).max() > 0.1 * np.abs(truth[-1] - u0).max()
