"""Long-run statistics of a Kolmogorov-flow rollout against the truth's: the statistics front.

A coarse solver without a subgrid model may track the truth for a few time units and then
drift to the wrong statistics (energy piling up at its highest wavenumbers); a learned
corrector may keep them. Measured here, after the HCT horizon, over a long window:

- `spectrum_error`: the L2 distance of log energy spectra over shells 1 ≤ k ≤ k_hi (the
  log-spectrum error; `attractor.energy_spectrum` for E(k)), each spectrum averaged over the
  window's snapshots and the ICs;
- `pdf_distance`: the L1 distance of vorticity PDFs on fixed bins (0: equal, 2: disjoint).

`long_run` rolls a model out chunk by chunk (one recorded frame per call, so memory holds one
frame) and accumulates both statistics over the window.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lib.multipdenet import attractor
from lib.pde import navier_stokes

K_HI = 16          # shells compared: k_max / 2 of the learned models' 64² grid
PDF_EDGES = np.linspace(-12.0, 12.0, 97)   # vorticity bins; attractor vorticity stays within ±12


def spectrum_error(e_point: np.ndarray, e_truth: np.ndarray, k_hi: int = K_HI) -> float:
    """`sqrt(mean_k (log E_point(k) − log E_truth(k))²)` over shells 1 ≤ k ≤ `k_hi` of two
    spectra `(K,)` (K > k_hi); inf when the point has no or non-finite energy on a shell."""
    p, t = np.asarray(e_point, float)[1:k_hi + 1], np.asarray(e_truth, float)[1:k_hi + 1]
    if len(p) < k_hi or not np.all(np.isfinite(p)) or np.any(p <= 0):
        return float("inf")
    return float(np.sqrt(np.mean((np.log(p) - np.log(t)) ** 2)))


BANDS = ((1, 4), (5, 8), (9, 16), (17, 31))   # shell bands (inclusive) of a 64² grid's spectrum


def band_energy_ratios(e_point: np.ndarray, e_truth: np.ndarray, bands=BANDS) -> list[float]:
    """`Σ_{k∈band} E_point(k) / Σ_{k∈band} E_truth(k)` for each inclusive shell band `(a, b)` of
    two spectra `(K,)`: 1 where the point holds the truth's energy, < 1 where it has lost some.
    ValueError naming the band when it reaches past either spectrum or the truth has no energy."""
    p, t = np.asarray(e_point, float), np.asarray(e_truth, float)
    out = []
    for a, b in bands:
        if not 0 <= a <= b < min(len(p), len(t)) or t[a:b + 1].sum() <= 0:
            raise ValueError(f"band ({a}, {b}) does not fit spectra of {len(p)} and {len(t)} shells "
                             "with truth energy in it")
        out.append(float(p[a:b + 1].sum() / t[a:b + 1].sum()))
    return out


def pdf_distance(h_point: np.ndarray, h_truth: np.ndarray) -> float:
    """L1 distance `Σ |p − q|` of two histograms on the same bins, each normalised to sum 1
    (0: the same distribution, 2: disjoint); 2 for an empty histogram (all non-finite)."""
    p, q = np.asarray(h_point, float), np.asarray(h_truth, float)
    if p.sum() <= 0:
        return 2.0
    return float(np.abs(p / p.sum() - q / q.sum()).sum())


def frame_statistics(u: np.ndarray, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Channels-last velocity `(b, n, n, 2)` -> (energy spectrum `(n/2,)` summed over the
    batch, vorticity histogram on `PDF_EDGES` (out-of-range values in the end bins; a
    non-finite field contributes nothing))."""
    w = np.asarray(navier_stokes.velocity_to_vorticity(jnp.moveaxis(jnp.asarray(u), -1, -3), length))
    finite = np.isfinite(w).all(axis=(-2, -1))
    if not finite.any():
        return np.full(w.shape[-1] // 2, np.nan), np.zeros(len(PDF_EDGES) - 1)
    w = w[finite]
    hist = np.histogram(np.clip(w, PDF_EDGES[0], PDF_EDGES[-1]), PDF_EDGES)[0].astype(float)
    spectrum = attractor.energy_spectrum(w.astype(np.float64), length).sum(0)
    if not finite.all():     # a blown-up IC: its energy counts as infinite
        spectrum = np.full_like(spectrum, np.inf)
    return spectrum, hist


def long_run(fn, params, u0: np.ndarray, n_frames: int, start: int, length: float,
             every: int = 1) -> dict:
    """Roll `fn(params, u, every)` (`every` recorded frames per call, the last kept) from `u0`
    `(b, n, n, 2)` up to frame `n_frames` and average the statistics of the kept frames
    after `start` (1-based; every `every`-th frame):
    `{"spectrum": (n/2,) per IC, "pdf": counts, "frames": count, "nonfinite": bool}`."""
    step = jax.jit(lambda p, u: fn(p, u, every)[-1])
    u, total, hist, frames, bad = jnp.asarray(u0), None, 0.0, 0, False
    for i in range(every, n_frames + 1, every):
        u = step(params, u)
        if i <= start:
            continue
        spectrum, h = frame_statistics(np.asarray(u), length)
        total = spectrum if total is None else total + spectrum
        hist, frames = hist + h, frames + 1
        if not np.all(np.isfinite(spectrum)):
            bad = True
            break
    return {"spectrum": (total / (frames * len(u0))).tolist(), "pdf": np.asarray(hist).tolist(),
            "frames": frames, "nonfinite": bad}
