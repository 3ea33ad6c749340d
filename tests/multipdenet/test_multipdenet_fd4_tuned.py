"""The fd4_tuned classical family (lib/multipdenet/classical.py) and its tuning sweep
(lib/multipdenet/fd4_tuning.py; tools/bench/multipdenet_front.py --tune_fd4)."""
import json
import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import classical, fd4_tuning
from lib.multipdenet.filters import DerivativeFilters2D
from lib.pde import navier_stokes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
L = 2 * math.pi
NS_META = {"pde": "navier_stokes", "length": L, "frame_dt": 0.056, "dtype": "float32",
           "params": dict(n=256, length=L, viscosity=1e-3, drag=0.1, forcing_wavenumber=4,
                          forcing_scale=1.0, max_velocity=7.0, peak_wavenumber=4.0, cfl=0.5)}


def _velocity(n, speed, peak):
    """Two random divergence-free fields `(2, n, n, 2)` of peak speed `speed`."""
    w = jax.vmap(lambda k: navier_stokes.random_initial_state(k, n, max_velocity=speed, peak_wavenumber=peak))(
        jax.random.split(jax.random.key(0), 2))[:, 0]
    return jnp.moveaxis(navier_stokes.vorticity_to_velocity(w, L), -3, -1)


def test_tuned_stencils_have_the_closed_form_symbols():
    """On sin(k x): ∂x = FD4 + φ·[1, −2, 0, 2, −1] multiplies cos(k x) by the modified wavenumber
    [2(⅔ + 2φ) sin kh − 2(1/12 + φ) sin 2kh] / h; the Laplacian FD4 + θ·[1, −4, 6, −4, 1] on
    cos(k x) by [(−2 cos 2kh + 32 cos kh − 30) / 12 + θ (2 cos 2kh − 8 cos kh + 6)] / h²."""
    n, theta, phi = 16, -0.7, 0.03
    h = 2 * math.pi / n
    x = np.arange(n) * h
    filt = DerivativeFilters2D(h=h, mode="symmetric", layout="fd4_taps", laplacian=True)
    for k in (1, 5, 8):
        kh = k * h
        for wave, check in ((np.cos, "lap"), (np.sin, "x")):
            u = np.broadcast_to(wave(k * x)[None, :, None], (n, n, 2)).astype(np.float32)
            d = filt.apply({"params": classical.stencil_params(theta, phi)["params"]["filters"]}, jnp.asarray(u)[None])
            if check == "lap":
                symbol = ((-2 * math.cos(2 * kh) + 32 * math.cos(kh) - 30) / 12
                          + theta * (2 * math.cos(2 * kh) - 8 * math.cos(kh) + 6)) / h**2
                want = symbol * u
            else:
                symbol = (2 * (2 / 3 + 2 * phi) * math.sin(kh) - 2 * (1 / 12 + phi) * math.sin(2 * kh)) / h
                want = symbol * np.broadcast_to(np.cos(k * x)[None, :, None], (n, n, 2))
            np.testing.assert_allclose(np.asarray(getattr(d, check)[0]), want, atol=2e-4 * abs(symbol) + 1e-4)


def test_zero_hyperviscosity_is_the_fd4_family_and_negative_theta_removes_energy():
    n, u0 = 32, _velocity(32, speed=2.0, peak=6.0)
    plain = classical.build(NS_META, "fd4_rk4", n, 4)
    zero = classical.build(NS_META, "fd4_tuned", n, 4, knobs=(0.0, 0.0))
    damped = classical.build(NS_META, "fd4_tuned", n, 4, knobs=(-2.0, 0.0))
    a, b, c = (fn(p, u0, 3) for fn, p in (plain, zero, damped))
    assert float(jnp.abs(a - b).max()) <= 1e-5 * float(jnp.abs(a).max())
    energy = lambda v: float((v[-1] ** 2).sum())  # noqa: E731
    assert energy(c) < energy(a)


def test_tuned_knobs_are_read_from_the_tuning_file_and_a_missing_entry_names_it(tmp_path):
    path = tmp_path / "fd4.json"
    path.write_text(json.dumps({"theta": {"64": {"2": -0.5, "3": -1.0}}, "dispersion": {"64": {"2": 0.02}}}))
    assert classical.tuned_knobs(64, 2, str(path)) == (-0.5, 0.02)
    with pytest.raises(ValueError, match=r"fd4\.json: no tuned stencil for 64² at 3 steps"):
        classical.tuned_knobs(64, 3, str(path))
    with pytest.raises(ValueError, match="knobs are the fd4_tuned family's, not 'spectral''s"):
        classical.build(NS_META, "spectral", 32, 4, knobs=(-0.5, 0.0))


def test_tuning_picks_the_best_finite_knobs_and_the_smaller_one_on_ties(tmp_path):
    """A stub accuracy: over θ (φ = 0) HCT peaks at −0.5 and −0.75 alike, −2 scores higher but
    blows up; then over φ at θ = −0.5 it peaks at 0.02."""
    def accuracy(fn, params, truth):
        f = params["params"]["filters"]
        theta, phi = float(f["second_order"][0]), round(float(f["first_order"][0]), 6)
        hct = {0.0: 4.0, -0.5: 5.0, -0.75: 5.0, -2.0: 9.0}[theta] + {0.0: 0.0, 0.02: 0.5, 0.04: 0.2}[phi]
        return {"hct": hct, "hct_std": 0.0, "hct_per_ic": [hct] * len(truth), "nonfinite_ics": int(theta == -2.0)}

    test = np.zeros((3, 2, 32, 32, 2), np.float32)
    spec = {"name": "p", "family": "fd4_tuned", "grid": 16, "steps_per_frame": 2}
    out = fd4_tuning.tune_fd4(NS_META, [("data/ds_a", test)], [spec], [-2.0, -0.75, 0.0, -0.5], [0.04, 0.0, 0.02],
                        str(tmp_path), accuracy)
    assert out["theta"] == {"16": {"2": -0.5}} and out["dispersion"] == {"16": {"2": 0.02}}
    assert [r["theta"] for r in out["sweep"]["16"]["2"]["theta"]] == [0.0, -0.5, -0.75, -2.0]
    assert os.path.exists(tmp_path / "ds_a" / "fd4_tuned@-0.5000_16_2.json")
    assert os.path.exists(tmp_path / "ds_a" / "fd4_tuned@-0.5000@+0.0200_16_2.json")
    assert fd4_tuning.parse_family_tag("fd4_tuned@-0.5000@+0.0200") == ("fd4_tuned", [-0.5, 0.02])
    assert fd4_tuning.parse_family_tag("fd4_tuned@-0.5000") == ("fd4_tuned", [-0.5, 0.0])
    assert fd4_tuning.parse_family_tag("spectral") == ("spectral", None)


def test_tuning_refuses_test_ics_before_any_compute():
    proc = subprocess.run([sys.executable, "tools/bench/multipdenet_front.py", "--tune_fd4",
                           "--truth=heldout_2"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "--truth=heldout_2: heldout_2 holds test ICs; tune on the ICs models were chosen on" in proc.stderr
