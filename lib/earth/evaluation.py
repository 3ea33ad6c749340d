"""Forecasts of trained EARTH copies on every window of the series, and their metrics per
split, horizon and seed on de-normalised values."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.earth import data as data_lib, metrics as metrics_lib
from lib.earth.training import copies


def predict(forecaster, params, prep: data_lib.Prepared, config) -> tuple[np.ndarray, int]:
    """Scaled forecasts [copies, E, N] for the windows ending at rows first..T-1 (E of them),
    and `first`; copies share the window, each uses its own params."""
    w, chunk = config.data.window, config.eval.chunk
    first = max(w - 1, prep.train_end - max(config.data.horizons))
    ends = np.arange(first, prep.series.shape[0])
    idx = ends[:, None] + np.arange(-w + 1, 1)[None, :]
    xs = prep.scaled[idx].astype(np.float32)
    n_copies = len(copies(config))
    one = jax.vmap(forecaster.apply, (None, 0))
    if jax.tree.leaves(params):
        fn = jax.jit(jax.vmap(one, (0, None)))
    else:  # no parameters (persistence): every copy gives the same forecast
        fn = jax.jit(lambda p, x: jnp.broadcast_to(one(p, x), (n_copies, *x.shape[::2])))
    out = []
    for a in range(0, len(xs), chunk):
        part = xs[a:a + chunk]
        pad = chunk - len(part)
        part = np.concatenate([part, np.repeat(part[-1:], pad, 0)]) if pad else part
        out.append(np.asarray(fn(params, part))[:, :chunk - pad])
    return np.concatenate(out, 1), first


def evaluate(forecaster, params, prep, config) -> tuple[dict, dict]:
    """Metrics per split, horizon and seed on de-normalised values, and the test forecasts."""
    preds, first = predict(forecaster, params, prep, config)
    w = config.data.window
    train_mean = prep.series[:prep.train_end].mean(0)
    res, forecasts = {}, {}
    for k, (h, s) in enumerate(copies(config)):
        for split in ("val", "test"):
            t = prep.targets(split, w, h)
            p = prep.unscale(preds[k, t - h - first])
            m = metrics_lib.all_metrics(prep.series[t], p, train_mean)
            res.setdefault(split, {}).setdefault(str(h), []).append(m)
            if split == "test" and s == 0:
                forecasts[h] = (t, p)
    out = {}
    for split, by_h in res.items():
        out[split] = {}
        for h, runs in by_h.items():
            mean = {key: float(np.mean([r[key] for r in runs])) for key in runs[0]}
            mean["rmse_seeds"] = [r["rmse"] for r in runs]
            for key in ("rmse", "mae", "pcc"):   # the seed spread (population std over seeds)
                mean[f"{key}_std"] = float(np.std([r[key] for r in runs]))
            out[split][h] = mean
    return out, forecasts
