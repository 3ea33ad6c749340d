"""Every committed MultiPDENet model (experiments/multipdenet/trained/<name>/, written by
tools/multipdenet_export.py) loads with today's code and reproduces its stored rollout."""
import glob
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import runs

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "experiments", "multipdenet", "trained")
FOLDERS = sorted(glob.glob(os.path.join(ROOT, "*", runs.PARAMS)))


def test_there_is_a_committed_model():
    assert FOLDERS, f"no {runs.PARAMS} under {ROOT}"


@pytest.mark.parametrize("params_file", FOLDERS, ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_committed_model_reproduces_its_reference_rollout(params_file):
    run = runs.load_run(os.path.dirname(params_file))
    ref = run.data["reference"]
    frames = np.asarray(jax.jit(run.emulator.rollout, static_argnums=2)(
        run.params, jnp.asarray(ref["u0"]), len(ref["frames"])))
    scale = np.abs(ref["frames"]).max()
    assert np.abs(frames - ref["frames"]).max() <= 1e-4 * scale
    # and the model is better than standing still against the truth it was exported with
    assert np.abs(frames - ref["truth"]).mean() < np.abs(ref["u0"] - ref["truth"]).mean()
