"""The CADES notebook runs in a Jupyter kernel from its own folder, shows its figure, and the
detector behaves on the server-stop trace: it flags every window after the stop and few
before it, with valid conformal p-values.

Executed through a real `python3` kernel (nbclient) with the notebook's folder as the
working directory; a probe cell after the last one reads the numbers.
"""
import os

import numpy as np
import pytest

from tests.notebook_utils import error_outputs, image_count, module_run, notebook_path

pytestmark = pytest.mark.slow   # a kernel, JAX compiles and a short training run

NOTEBOOK = notebook_path("cades")

PROBE = """{
    "cwd": os.getcwd(), "alpha": ALPHA, "n_cal": int(N_CAL),
    "cal_sizes": [int(len(v)) for v in detector.cal_scores.values()],
    "p_cades": [float(v) for v in p_cades],
    "p_arr": [float(v) for v in p_score["kl_arr"]], "p_int": [float(v) for v in p_score["kl_int"]],
    "before": [bool(v) for v in before], "after": [bool(v) for v in after],
    "flagged": [bool(v) for v in flagged], "ends": [float(v) for v in ends],
    "t_fail": T_FAIL, "marks_after": sorted({int(m) for m in marks[times > T_FAIL]}),
    "kernel_pid": os.getpid(),
}"""


run = module_run(NOTEBOOK, PROBE, optimise=True)   # a training loop: see notebook_utils


def test_notebook_runs_from_its_folder_and_shows_the_trace(run):
    nb, probe = run
    assert error_outputs(nb) == []
    assert probe["cwd"] == os.path.dirname(NOTEBOOK)
    assert image_count(nb) == 1


def test_trace_has_the_stop_and_windows_on_both_sides(run):
    _, p = run
    assert p["marks_after"] == [0, 1]              # no mark-2 response after the stop
    assert sum(p["before"]) >= 10 and sum(p["after"]) >= 5
    assert p["cal_sizes"] == [p["n_cal"], p["n_cal"]]


def test_p_values_are_conformal_and_bonferroni(run):
    _, p = run
    n = p["n_cal"]
    p_arr, p_int, p_cades = (np.asarray(p[k]) for k in ("p_arr", "p_int", "p_cades"))
    for ps in (p_arr, p_int):
        assert np.all(ps >= 2 / (n + 1) - 1e-9) and np.all(ps <= 1.0)   # two-sided, n cal scores
    np.testing.assert_allclose(p_cades, np.minimum(2 * np.minimum(p_arr, p_int), 1.0), rtol=1e-6)
    np.testing.assert_array_equal(p["flagged"], p_cades <= p["alpha"])


def test_cades_flags_the_stop_and_few_normal_windows(run):
    _, p = run
    flagged, before, after = (np.asarray(p[k]) for k in ("flagged", "before", "after"))
    assert flagged[after].all(), np.asarray(p["p_cades"])[after]
    # α = 0.05 on ~16 normal windows: a handful of false alarms at most
    assert flagged[before].sum() <= 3, np.asarray(p["p_cades"])[before]


def test_the_kernel_is_stopped_and_reaped_after_the_run(run):
    _, p = run
    with pytest.raises(ProcessLookupError):   # gone: neither running nor a zombie
        os.kill(p["kernel_pid"], 0)
