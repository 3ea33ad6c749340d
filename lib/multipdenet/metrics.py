"""Rollout metrics of notes §3: RMSE, MAE, MNAD, Pearson correlation per step, HCT.

Trajectories are `(B, T, ...)`: B trajectories, T predicted frames at times
`dt, 2 dt, ..., T dt` (the initial condition is not a frame), any trailing spatial and
channel axes. The per-trajectory functions take `(T, ...)`; `evaluate_rollouts` maps them
over B and returns the mean and the (population, ddof = 0) standard deviation over B.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

Array = jax.Array

HCT_MODES = ("first_drop", "total")


def rmse(pred: Array, true: Array) -> Array:
    """`sqrt(mean((pred - true)²))` over all frames and points of one trajectory `(T, ...)`; scalar."""
    return jnp.sqrt(jnp.mean((pred - true) ** 2))


def mae(pred: Array, true: Array) -> Array:
    """`mean(|pred - true|)` over all frames and points of one trajectory `(T, ...)`; scalar."""
    return jnp.mean(jnp.abs(pred - true))


def mnad(pred: Array, true: Array) -> Array:
    """Mean normalised absolute difference `mean_t [ mean_x |pred_t - true_t| ] / (max true - min true)`.

    The range is that of the whole true trajectory (all frames, points and channels),
    which keeps it defined when one frame is constant. Inputs `(T, ...)`; scalar.
    """
    return jnp.mean(jnp.abs(pred - true)) / (jnp.max(true) - jnp.min(true))


def correlation_per_step(pred: Array, true: Array) -> Array:
    """Pearson correlation of each frame over all its points and channels: `(T, ...)` -> `(T,)`.

    A frame where either field is constant has no defined correlation; it gets 0.
    """
    p = pred.reshape(pred.shape[0], -1)
    t = true.reshape(true.shape[0], -1)
    p = p - p.mean(axis=1, keepdims=True)
    t = t - t.mean(axis=1, keepdims=True)
    denom = jnp.sqrt(jnp.sum(p**2, axis=1) * jnp.sum(t**2, axis=1))
    return jnp.where(denom > 0, jnp.sum(p * t, axis=1) / jnp.where(denom > 0, denom, 1.0), 0.0)


def high_correlation_time(corr: Array, dt: float, threshold: float = 0.8, mode: str = "first_drop") -> Array:
    """High-correlation time from per-step correlations `(T,)`; scalar, in time units.

    "first_drop" (default, the issue's definition): `dt ×` the number of leading frames with
    correlation >= threshold, i.e. the time of the last frame before the correlation first
    drops below the threshold. "total": `dt ×` the number of frames at or above it (the
    sum form of notes §3), which can only be larger. Both are capped at the horizon `T dt`.
    """
    if mode not in HCT_MODES:
        raise ValueError(f"unknown HCT mode {mode!r}; allowed: {HCT_MODES}")
    above = (corr >= threshold).astype(jnp.float32)
    count = jnp.sum(jnp.cumprod(above)) if mode == "first_drop" else jnp.sum(above)
    return dt * count


def evaluate_rollouts(
    pred: Array, true: Array, dt: float, threshold: float = 0.8, hct_mode: str = "first_drop"
) -> dict[str, tuple[Array, Array]]:
    """All metrics over a batch of trajectories `(B, T, ...)`.

    Returns `{name: (mean over B, std over B)}` for "rmse", "mae", "mnad", "hct" (scalars)
    and "correlation" (`(T,)` arrays, per step).
    """
    if pred.shape != true.shape:
        raise ValueError(f"prediction shape {pred.shape} differs from truth shape {true.shape}")
    corr = jax.vmap(correlation_per_step)(pred, true)
    per_traj = {
        "rmse": jax.vmap(rmse)(pred, true),
        "mae": jax.vmap(mae)(pred, true),
        "mnad": jax.vmap(mnad)(pred, true),
        "hct": jax.vmap(lambda c: high_correlation_time(c, dt, threshold, hct_mode))(corr),
        "correlation": corr,
    }
    return {k: (jnp.mean(v, axis=0), jnp.std(v, axis=0)) for k, v in per_traj.items()}
