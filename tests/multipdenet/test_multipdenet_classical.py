"""lib/multipdenet/classical.py (the fair front's solver families and their step sweep),
statistics.py (the statistics front) and front_plots.py."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lib.multipdenet import classical, front, front_plots, statistics
from lib.pde import navier_stokes

L = 2 * math.pi
NS_META = {"pde": "navier_stokes", "length": L, "frame_dt": 0.056, "dtype": "float32",
           "params": dict(n=256, length=L, viscosity=1e-3, drag=0.1, forcing_wavenumber=4,
                          forcing_scale=1.0, max_velocity=7.0, peak_wavenumber=4.0, cfl=0.5)}


def _velocity(n, key=0, speed=1.0, peak=2.0, dtype=jnp.float32):
    w = jax.vmap(lambda k: navier_stokes.random_initial_state(k, n, max_velocity=speed, peak_wavenumber=peak,
                                                              dtype=dtype))(jax.random.split(jax.random.key(key), 2))[:, 0]
    return jnp.moveaxis(navier_stokes.vorticity_to_velocity(w, L), -3, -1)


def test_step_sweep_starts_at_the_checked_step_and_only_grows_it():
    for family in ("spectral", "fd4_rk4", "jax_cfd"):
        for n in (32, 64, 128):
            default = classical.default_steps(NS_META, family, n)
            dt = NS_META["frame_dt"] / default
            stable = navier_stokes.MAX_CFL * (L / n) / 7.0
            assert dt <= 0.95 * stable < NS_META["frame_dt"] / (default - 1 or 1e-9)   # the fewest steps
            steps = [classical.steps_for(NS_META, family, n, f) for f in (1, 1.25, 1.5, 2, 3)]
            assert steps[0] == default and steps == sorted(steps, reverse=True) and steps[-1] >= 1
    with pytest.raises(ValueError, match="dt_factor = 0.5 must be >= 1"):
        classical.steps_for(NS_META, "spectral", 64, 0.5)


def test_every_step_of_the_sweep_passes_the_solvers_own_checks_with_its_implied_bound():
    n = 32
    for steps in (5, 3, 2, 1):
        bound = classical.implied_bound(NS_META, "spectral", n, steps)
        assert bound <= 7.0 and (NS_META["frame_dt"] / steps) * bound <= 0.95 * navier_stokes.MAX_CFL * L / n + 1e-12
        fn, params = classical.build(dict(NS_META, coarse_grid=n), "spectral", n, steps)   # no ValueError
        assert fn(params, _velocity(n), 1).shape == (1, 2, n, n, 2)


def test_a_larger_step_does_the_same_work_in_fewer_steps():
    """Spectral ETDRK4 at two steps: on a slow, resolved flow both reach the same state."""
    n, u0 = 32, _velocity(32, speed=0.5)
    a = classical.build(NS_META, "spectral", n, 6)[0]({}, u0, 4)
    b = classical.build(NS_META, "spectral", n, 2)[0]({}, u0, 4)
    assert float(jnp.abs(a - b).max()) < 1e-4 * float(jnp.abs(a).max())


def test_jax_cfd_agrees_with_the_workspace_solver_on_a_resolved_flow():
    """jax-cfd's CN/RK4 (an independent code, [x, y] layout) and the workspace's ETDRK4 on the
    same equation: on a slow, resolved flow they agree to the time-stepping error."""
    pytest.importorskip("jax_cfd")
    n = 64
    jax.config.update("jax_enable_x64", True)
    try:
        u0 = _velocity(n, key=1, dtype=jnp.float64)
        meta = dict(NS_META, dtype="float64")
        a = np.asarray(classical.build(meta, "spectral", n, 20)[0]({}, u0, 9))
        b = np.asarray(classical.build(meta, "jax_cfd", n, 20)[0]({}, u0, 9))
    finally:
        jax.config.update("jax_enable_x64", False)
    change = np.abs(a[-1] - np.asarray(u0)).max()
    assert change > 0.3                                       # the flow moved
    assert np.abs(a - b).max() < 1e-3 * np.abs(a).max()       # but the two solvers agree


def test_a_missing_optional_family_is_named_with_its_extra(monkeypatch):
    monkeypatch.setitem(classical.OPTIONAL, "jax_cfd", ("no_such_module_xyz", "bench"))
    assert not classical.available("jax_cfd") and classical.available("spectral")
    assert classical.missing_message("jax_cfd") == (
        "classical family 'jax_cfd' skipped: no_such_module_xyz is not installed (pip install -e \".[bench]\")")
    with pytest.raises(ValueError, match="not installed"):
        classical.build(NS_META, "jax_cfd", 32, 2)


def test_merged_accuracies_are_the_accuracy_over_all_ics():
    a = {"hct": 2.0, "hct_std": 1.0, "hct_per_ic": [1.0, 3.0], "hct_velocity_per_ic": [2.0, 2.0],
         "hct_velocity": 2.0, "hct_velocity_std": 0.0, "nonfinite_ics": 1, "horizon": 10.0}
    b = {"hct": 5.0, "hct_std": 0.0, "hct_per_ic": [5.0], "hct_velocity_per_ic": [4.0],
         "hct_velocity": 4.0, "hct_velocity_std": 0.0, "nonfinite_ics": 0, "horizon": 10.0}
    m = front.merge_accuracies([a, b])
    assert m["hct_per_ic"] == [1.0, 3.0, 5.0] and m["hct"] == pytest.approx(3.0)
    assert m["hct_std"] == pytest.approx(np.std([1, 3, 5])) and m["hct_velocity"] == pytest.approx(8 / 3)
    assert m["nonfinite_ics"] == 1 and m["horizon"] == 10.0


def test_spectrum_error_and_pdf_distance_closed_forms():
    e = np.exp(-np.arange(40) / 5.0)
    assert statistics.spectrum_error(e, e) == 0.0
    assert statistics.spectrum_error(math.e * e, e) == pytest.approx(1.0)   # log ratio 1 on every shell
    assert statistics.spectrum_error(np.where(np.arange(40) > 10, 0.0, e), e) == math.inf  # no energy at k > 10
    assert statistics.spectrum_error(e[:10], e) == math.inf                 # a grid without shell 16
    h = np.array([1.0, 3.0, 0.0])
    assert statistics.pdf_distance(2 * h, h) == 0.0
    assert statistics.pdf_distance(np.array([0, 0, 5.0]), h) == pytest.approx(2.0)
    assert statistics.pdf_distance(np.zeros(3), h) == 2.0


def test_long_run_averages_the_window_and_flags_a_blow_up():
    n, u0 = 32, np.asarray(_velocity(32))
    frozen = lambda p, u, k: jnp.stack([u] * k)  # noqa: E731  (a "model" that keeps its state)
    st = statistics.long_run(frozen, {}, u0, n_frames=5, start=2, length=L)
    e0, h0 = statistics.frame_statistics(u0, L)
    assert st["frames"] == 3 and not st["nonfinite"]
    assert np.allclose(st["spectrum"], e0 / len(u0)) and np.allclose(st["pdf"], 3 * h0)
    # kinetic energy: the spectrum sums to the mean of ½|u|² per IC
    assert sum(st["spectrum"]) == pytest.approx(float((0.5 * (u0.astype(np.float64) ** 2).sum(-1)).mean()), rel=1e-4)
    # two frames per call: frames 2 and 4 are kept (start = 1 drops none of them)
    assert statistics.long_run(frozen, {}, u0, n_frames=5, start=1, length=L, every=2)["frames"] == 2
    blow = lambda p, u, k: jnp.stack([u * jnp.inf] * k)  # noqa: E731
    bad = statistics.long_run(blow, {}, u0, n_frames=5, start=0, length=L)
    assert bad["nonfinite"] and bad["frames"] == 1


def test_the_front_figure_shows_every_learned_point():
    points = [{"name": f"spectral ETDRK4 {n}²", "family": "spectral", "grid": n, "cost": c, "hct": h,
               "hct_std": 0.1} for n, c, h in ((32, 0.01, 2.0), (64, 0.05, 5.0), (128, 0.4, 8.0))]
    points += [{"name": f"model {i}", "family": "learned", "grid": 64, "cost": 0.02 + 0.01 * i,
                "hct": 4.0 + 0.1 * i, "hct_std": 0.2} for i in range(9)]
    result = {"system": "navier_stokes", "points": points, "title": "t",
              "front": [{"name": p["name"], "cost": p["cost"], "hct": p["hct"]} for p in points[:3]]}
    fig = front_plots.front_figure(result)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert all(f"model {i} (64²)" in labels for i in range(9))            # the 7th and later too
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_a_front_narrower_than_a_decade_gets_a_few_non_overlapping_cost_labels():
    import matplotlib.pyplot as plt
    points = [{"name": n, "family": f, "grid": 64, "cost": c, "hct": h, "hct_std": 0.5}
              for n, f, c, h in (("tuned", "fd4_tuned", 0.023, 5.42), ("a", "learned", 0.0306, 5.36),
                                 ("b", "learned", 0.0302, 5.24), ("c", "learned", 0.0226, 5.45))]
    result = {"system": "navier_stokes", "points": points, "title": "t",
              "front": [{"name": "tuned", "cost": 0.023, "hct": 5.42}]}
    fig = front_plots.front_figure(result)
    fig.canvas.draw()
    ax = fig.axes[0]
    shown = [t for t in ax.get_xticklabels(minor=False) + ax.get_xticklabels(minor=True)
             if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
    assert 2 <= len(shown) <= 4, [t.get_text() for t in shown]
    boxes = sorted((t.get_window_extent() for t in shown), key=lambda b: b.x0)
    assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))                  # none overlap
    plt.close(fig)
    wide = dict(result, points=points + [{"name": "dns", "family": "spectral", "grid": 256, "cost": 3.0,
                                          "hct": 9.0, "hct_std": 0.0}])
    fig = front_plots.front_figure(wide)                                       # > a decade: untouched
    assert fig.axes[0].xaxis.get_minor_formatter().__class__.__name__ != "NullFormatter"
    plt.close(fig)


def test_the_statistics_figure_names_every_learned_point():
    import matplotlib.pyplot as plt
    spectrum = [1.0] + [k ** -3.0 for k in range(1, 17)]
    points = [{"name": n, "family": f, "cost": c, "spectrum_error": e, "spectrum": spectrum}
              for n, f, c, e in (("tuned", "fd4_tuned", 0.023, 0.139), ("model a", "learned", 0.0306, 0.172),
                                 ("model b", "learned", 0.0302, 0.13))]
    stats = {"points": points, "front": [points[0]], "k_hi": 16, "truth_spectrum": spectrum}
    fig = front_plots.stats_figure(stats)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert {"fd4_tuned", "model a", "model b", "classical front"} <= set(labels) and "learned" not in labels
    plt.close(fig)
