"""Epidemic series: the benchmark text format, validation, chronological splits, windows.

File format (Cola-GNN / EpiGNN / EARTH benchmarks, e.g. `region785.txt` + `region-adj.txt`):

* series file: one row per time step (week or day), one comma-separated column per region,
  non-negative counts (ints or floats);
* adjacency file: an N × N comma-separated matrix over the same regions in the same order
  (0/1 or non-negative weights; self loops allowed). Blank trailing lines are ignored.

Point a config at your own pair of files (`data.series_path`, `data.adjacency_path`) and
they are read, validated and split exactly like the benchmarks. Bad input (ragged rows,
non-numbers, negative or non-finite counts, an adjacency that is not square or does not
match the number of regions) raises `DataError` naming the file and the problem.

Forecasting protocol (as in the released code): min–max scaling per region fitted on the
training rows; the sample for a window ending at row e (rows e-W+1..e) with horizon h is
the value at row e + h; a sample belongs to the split holding its target row. Splits are
chronological fractions of the rows.
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np


class DataError(ValueError):
    """Input series or adjacency that the forecaster cannot use."""


def _read_matrix(path: str, what: str) -> np.ndarray:
    if not os.path.isfile(path):
        raise DataError(f"{what} file {path!r} does not exist")
    with open(path) as f:
        lines = [ln.strip() for ln in f.read().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise DataError(f"{what} file {path!r} is empty")
    rows = []
    for k, ln in enumerate(lines):
        if not ln:
            raise DataError(f"{what} file {path!r}: blank line {k + 1} inside the data")
        try:
            rows.append([float(v) for v in ln.split(",")])
        except ValueError as e:
            raise DataError(f"{what} file {path!r}, line {k + 1}: not comma-separated numbers ({e})") from None
        if len(rows[-1]) != len(rows[0]):
            raise DataError(f"{what} file {path!r}, line {k + 1}: {len(rows[-1])} columns, "
                            f"line 1 has {len(rows[0])}")
    return np.asarray(rows, dtype=np.float64)


NEGATIVE = ("error", "keep", "clip")
ROUNDINGS = ("round", "floor")


def check_series(series: np.ndarray, name: str = "series", negative: str = "error") -> np.ndarray:
    """[T, N] finite, at least 2 regions and 2 steps; returns float64.

    negative: "error" (default) refuses negative counts; "keep" accepts them as published
    (Australia-COVID's daily counts hold negative reporting corrections); "clip" sets them to 0.
    """
    if negative not in NEGATIVE:
        raise DataError(f"unknown negative-count policy {negative!r}; allowed: {NEGATIVE}")
    x = np.asarray(series, dtype=np.float64)
    if x.ndim != 2:
        raise DataError(f"{name}: expected a [time, regions] matrix, got shape {x.shape}")
    if x.shape[0] < 2 or x.shape[1] < 2:
        raise DataError(f"{name}: need at least 2 time steps and 2 regions, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        t, v = np.argwhere(~np.isfinite(x))[0]
        raise DataError(f"{name}: non-finite value {x[t, v]} at time {t}, region {v}")
    if negative == "clip":
        x = np.maximum(x, 0.0)
    if negative == "error" and np.any(x < 0):
        t, v = np.argwhere(x < 0)[0]
        raise DataError(f"{name}: negative count {x[t, v]} at time {t}, region {v}; "
                        "counts must be >= 0 (or set data.negative_counts to 'keep' or 'clip')")
    return x


def check_adjacency(adj: np.ndarray, num_regions: int, name: str = "adjacency") -> np.ndarray:
    """[N, N] finite, non-negative, matching the series' N regions; returns float64."""
    a = np.asarray(adj, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise DataError(f"{name}: must be a square matrix, got shape {a.shape}")
    if a.shape[0] != num_regions:
        raise DataError(f"{name}: {a.shape[0]} × {a.shape[1]} does not match the series' "
                        f"{num_regions} regions")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise DataError(f"{name}: entries must be finite and >= 0")
    return a


def load_files(series_path: str, adjacency_path: str, negative: str = "error"
               ) -> tuple[np.ndarray, np.ndarray]:
    """Read and validate a benchmark pair: (series [T, N], adjacency [N, N])."""
    series = check_series(_read_matrix(series_path, "series"), series_path, negative)
    adj = check_adjacency(_read_matrix(adjacency_path, "adjacency"), series.shape[1], adjacency_path)
    return series, adj


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A scaled series with its split boundaries.

    series [T, N] raw counts; scaled [T, N] = (series - lo) / (hi - lo) with lo, hi [N]
    from the training rows; train_end / val_end: first row of val / test.
    """

    series: np.ndarray
    scaled: np.ndarray
    adjacency: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    train_end: int
    val_end: int

    def unscale(self, y):
        return y * (self.hi - self.lo) + self.lo

    def targets(self, split: str, window: int, horizon: int) -> np.ndarray:
        """Target rows of `split` whose window (rows t-h-W+1..t-h) lies inside the series."""
        first = window - 1 + horizon
        lo, hi = {"train": (0, self.train_end), "val": (self.train_end, self.val_end),
                  "test": (self.val_end, self.series.shape[0])}[split]
        return np.arange(max(lo, first), hi)


def prepare(series: np.ndarray, adjacency: np.ndarray, *, train_frac: float, val_frac: float,
            window: int, horizons, negative: str = "error", rounding: str = "round") -> Prepared:
    """Validate, split chronologically and scale; every split must hold a sample at every horizon.

    rounding: how the split fractions become rows: "round" (Python's round) or "floor"
    (int(), as EpiGNN's and Cola-GNN's loaders do: train_end = int(train_frac · T),
    val_end = int((train_frac + val_frac) · T))."""
    series = check_series(series, negative=negative)
    adjacency = check_adjacency(adjacency, series.shape[1])
    t = series.shape[0]
    longest = max(horizons)
    if window < 2:
        raise DataError(f"window {window} must be >= 2")
    if window + longest > t:
        raise DataError(f"window {window} + horizon {longest} = {window + longest} is longer than "
                        f"the series ({t} steps)")
    if rounding not in ROUNDINGS:
        raise DataError(f"unknown split rounding {rounding!r}; allowed: {ROUNDINGS}")
    cut = (lambda v: int(round(v))) if rounding == "round" else int
    train_end = cut(train_frac * t)
    val_end = cut((train_frac + val_frac) * t)
    if not 0 < train_end < val_end < t:
        raise DataError(f"split fractions {train_frac}/{val_frac} leave an empty split of {t} steps")
    if train_end < window + longest + 1:
        raise DataError(f"training split ({train_end} steps) is shorter than window {window} + "
                        f"horizon {longest} + 1; use a longer series or a smaller window")
    lo = series[:train_end].min(axis=0)
    hi = series[:train_end].max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)
    scaled = (series - lo) / (hi - lo)
    return Prepared(series, scaled, adjacency, lo, hi, train_end, val_end)


def windows(scaled: np.ndarray, targets: np.ndarray, window: int, horizon: int) -> np.ndarray:
    """Input windows [len(targets), W, N] for target rows `targets` at `horizon`."""
    ends = np.asarray(targets) - horizon
    idx = ends[:, None] + np.arange(-window + 1, 1)[None, :]
    if idx.size and idx.min() < 0:
        raise DataError(f"a target row needs rows before the start of the series (window {window}, "
                        f"horizon {horizon})")
    return scaled[idx]
