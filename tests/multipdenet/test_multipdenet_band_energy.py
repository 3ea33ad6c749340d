"""`statistics.band_energy_ratios` and the band-energy tool's input checks."""
import os
import subprocess
import sys

import numpy as np
import pytest

from lib.multipdenet import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_band_ratios_are_the_band_sums_over_the_truths():
    truth = np.arange(1.0, 33.0)                      # shells 0..31
    point = truth.copy()
    point[17:] *= 0.5                                 # half the energy above shell 16
    point[5:9] *= 2.0
    r = statistics.band_energy_ratios(point, truth)
    np.testing.assert_allclose(r, [1.0, 2.0, 1.0, 0.5])
    # a band's ratio is its sums' quotient, not a mean of shell ratios
    p2 = truth.copy()
    p2[1] = 0.0
    assert statistics.band_energy_ratios(p2, truth, bands=((1, 2),))[0] == pytest.approx(3.0 / 5.0)


def test_band_past_the_spectrum_or_without_truth_energy_is_refused():
    with pytest.raises(ValueError, match=r"band \(9, 16\)"):
        statistics.band_energy_ratios(np.ones(16), np.ones(16))
    with pytest.raises(ValueError, match=r"band \(1, 4\)"):
        statistics.band_energy_ratios(np.ones(32), np.zeros(32))


def test_tool_names_a_bad_classical_point_before_any_compute():
    out = subprocess.run([sys.executable, "tools/multipdenet_band_energy.py", "--classical=64x2"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "--classical='64x2': expected <grid>:<steps per truth frame>" in out.stderr
    assert "import jax" not in out.stderr
