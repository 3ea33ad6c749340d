"""EARTH data: simulator invariants, benchmark-format loader round trip and errors, splits, DTW."""
import numpy as np
import pytest

from lib.earth import data, gltg, metrics, simulator


def _write(path, rows):
    path.write_text("\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return str(path)


def test_simulator_invariants():
    out = simulator.simulate(simulator.SimConfig(num_regions=7, num_weeks=60, seed=2))
    np.testing.assert_allclose(out["s"] + out["i"] + out["r"], 1.0, atol=1e-12)
    assert out["counts"].shape == (60, 7) and np.all(out["counts"] >= 0)
    assert np.all(out["counts"] == np.round(out["counts"]))
    adj = out["adjacency"]
    np.testing.assert_array_equal(adj, adj.T)
    reach = np.linalg.matrix_power(adj, 7) > 0                   # connected
    assert reach.all()
    np.testing.assert_allclose(out["mixing"].sum(1), 1.0)
    assert np.all(out["incidence"] >= -1e-12)


def test_loader_round_trip_and_trailing_blank_line(tmp_path):
    series = np.array([[1, 2, 3], [4, 5, 6.5], [0, 0, 1]])
    adj = np.eye(3)
    sp = _write(tmp_path / "s.txt", series)
    ap = tmp_path / "a.txt"
    ap.write_text("1,0,0\n0,1,0\n0,0,1\n\n")
    s, a = data.load_files(sp, str(ap))
    np.testing.assert_array_equal(s, series)
    np.testing.assert_array_equal(a, adj)


@pytest.mark.parametrize("adj_rows,msg", [
    ([[1, 0, 0], [0, 1, 0]], "square"),
    ([[1, 0], [0, 1]], "does not match the series' 3 regions"),
    ([[1, 0, 0], [0, -1, 0], [0, 0, 1]], ">= 0"),
])
def test_bad_adjacency(tmp_path, adj_rows, msg):
    sp = _write(tmp_path / "s.txt", [[1, 2, 3], [4, 5, 6]])
    ap = _write(tmp_path / "a.txt", adj_rows)
    with pytest.raises(data.DataError, match=msg):
        data.load_files(sp, ap)


def test_bad_series(tmp_path):
    ap = _write(tmp_path / "a.txt", np.eye(2))
    with pytest.raises(data.DataError, match="negative count -3.0 at time 1, region 0"):
        data.load_files(_write(tmp_path / "s.txt", [[1, 2], [-3, 4]]), ap)
    kept, _ = data.load_files(_write(tmp_path / "k.txt", [[1, 2], [-3, 4]]), ap, negative="keep")
    clipped, _ = data.load_files(_write(tmp_path / "c.txt", [[1, 2], [-3, 4]]), ap, negative="clip")
    assert kept[1, 0] == -3 and clipped[1, 0] == 0
    (tmp_path / "r.txt").write_text("1,2\n3\n")
    with pytest.raises(data.DataError, match="line 2: 1 columns"):
        data.load_files(str(tmp_path / "r.txt"), ap)
    (tmp_path / "n.txt").write_text("1,2\n3,x\n")
    with pytest.raises(data.DataError, match="not comma-separated numbers"):
        data.load_files(str(tmp_path / "n.txt"), ap)
    with pytest.raises(data.DataError, match="does not exist"):
        data.load_files(str(tmp_path / "missing.txt"), ap)


def test_window_longer_than_series_is_refused():
    s = np.ones((30, 3))
    with pytest.raises(data.DataError, match="is longer than the series"):
        data.prepare(s, np.eye(3), train_frac=0.5, val_frac=0.3, window=28, horizons=(5,))
    with pytest.raises(data.DataError, match="training split"):
        data.prepare(s, np.eye(3), train_frac=0.5, val_frac=0.3, window=12, horizons=(5,))


def test_split_scaling_and_window_alignment():
    rng = np.random.default_rng(0)
    s = rng.uniform(0, 100, size=(100, 4))
    p = data.prepare(s, np.eye(4), train_frac=0.5, val_frac=0.3, window=6, horizons=(3, 5))
    assert (p.train_end, p.val_end) == (50, 80)
    np.testing.assert_allclose(p.scaled[:50].min(0), 0.0)
    np.testing.assert_allclose(p.scaled[:50].max(0), 1.0)
    np.testing.assert_allclose(p.unscale(p.scaled), s)
    t = p.targets("test", 6, 5)
    assert t[0] == 80 and t[-1] == 99
    assert p.targets("train", 6, 5)[0] == 10                     # first full window
    w = data.windows(p.scaled, t, 6, 5)
    np.testing.assert_array_equal(w[:, -1], p.scaled[t - 5])     # window ends h before target
    np.testing.assert_array_equal(w[:, 0], p.scaled[t - 10])


def test_dtw_matches_brute_force_and_semantic_selection():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(12, 4))
    z = (x - x.mean(0)) / x.std(0)

    def brute(a, b):
        d = np.full((13, 13), np.inf)
        d[0, 0] = 0
        for i in range(1, 13):
            for j in range(1, 13):
                d[i, j] = abs(a[i - 1] - b[j - 1]) + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
        return d[12, 12]

    dist = gltg.dtw_distances(x)
    assert dist[1, 3] == pytest.approx(brute(z[:, 1], z[:, 3]))
    # region 2 is region 0 shifted by one step: DTW calls them near-identical
    t = np.arange(40.0)
    series = np.stack([np.sin(t / 3), np.cos(t * 1.7) + t / 20, np.sin((t - 1) / 3), -t / 40], 1)
    most = gltg.semantic_graph(series, 1, "most")
    least = gltg.semantic_graph(series, 1, "least")
    assert most[0].argmax() == 2 and most[2].argmax() == 0
    assert least[0].argmax() != 2
    np.testing.assert_array_equal(most.sum(1), 1)


def test_metrics_closed_forms():
    y = np.array([[1.0, 2.0], [3.0, 10.0], [2.0, 4.0]])
    assert metrics.rmse(y, y + 2) == pytest.approx(2.0)
    assert metrics.mae(y, y - 1) == pytest.approx(1.0)
    assert metrics.pcc(y, 3 * y + 1) == pytest.approx(1.0)
    p = y.copy()
    p[0, 0] = 5.0                                                       # moves region 0's peak to t=0
    assert metrics.peak_time_error(y, p) == pytest.approx(0.5)
    assert metrics.peak_value_error(y, p) == pytest.approx(1.0)
    assert metrics.peak_mae(y, p, train_mean=np.array([1.5, 100.0])) == pytest.approx(0.0)
    assert metrics.peak_mae(y, p, train_mean=np.array([0.5, 100.0])) == pytest.approx(4 / 3)
