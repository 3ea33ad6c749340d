"""Forecast metrics on de-normalised values (released code `train.py:evaluate`, `utils.peak_error`).

All take y_true, y_pred [S, N] (samples in time order × regions).
"""
from __future__ import annotations

import numpy as np


def rmse(y, p) -> float:
    return float(np.sqrt(np.mean((y - p) ** 2)))


def mae(y, p) -> float:
    return float(np.mean(np.abs(y - p)))


def pcc(y, p) -> float:
    """Pearson correlation of the pooled values (0 when either side is constant)."""
    y, p = np.ravel(y), np.ravel(p)
    sy, sp = y.std(), p.std()
    if sy == 0 or sp == 0:
        return 0.0
    return float(np.mean((y - y.mean()) * (p - p.mean())) / (sy * sp))


def peak_mae(y, p, train_mean) -> float:
    """MAE over points whose true value exceeds the region's training mean [N] (the
    released code's peak error; the paper's "peak" metric)."""
    mask = y > np.asarray(train_mean)[None, :]
    return float(np.abs(y - p)[mask].mean()) if mask.any() else 0.0


def peak_time_error(y, p) -> float:
    """Mean over regions of |argmax_t y - argmax_t p| in steps (the test period's main peak)."""
    return float(np.mean(np.abs(np.argmax(y, axis=0) - np.argmax(p, axis=0))))


def peak_value_error(y, p) -> float:
    """Mean over regions of |max_t y - max_t p| (height of the test period's main peak)."""
    return float(np.mean(np.abs(y.max(axis=0) - p.max(axis=0))))


def all_metrics(y, p, train_mean) -> dict:
    return dict(rmse=rmse(y, p), mae=mae(y, p), pcc=pcc(y, p), peak_mae=peak_mae(y, p, train_mean),
                peak_time=peak_time_error(y, p), peak_value=peak_value_error(y, p))
