"""Data: Gaussian core/spurious blocks with chosen spectra and correlation; coloured digits.

Gaussian design (d_x = d_y = d). With spectra s_x, s_y (each with mean 1, so tr Σ = D)
and canonical correlation ρ ∈ [0, 1]:

    x = diag(√s_x) a,   y = diag(√s_y) (ρ a + √(1−ρ²) b),   a, b ~ N(0, I_d) independent,

i.e. z = F [a; b] with F = [[√s_x, 0], [ρ√s_y, √(1−ρ²)√s_y]] and

    Σ_xx = diag(s_x), Σ_yy = diag(s_y), Σ_xy = ρ diag(√(s_x s_y)),
    Schur complement Σ_{y|x} = (1 − ρ²) Σ_yy.

ρ sets how much of y is a function of x (a small Schur complement means y is learned
fast); the decay of s_y sets how "simple" y is (few directions carry its variance).
Labels g = xᵀθ*_x + σε with θ*_x ~ N(0, I_d/d) drawn once per setting (‖θ*_x‖ ≈ 1).

Coloured digits: the 8×8 digits of scikit-learn (1797 images) are the core x (64
pixels); the label is g = +1 for digits 5–9 and −1 for 0–4; a colour c = ±1 agrees with
the label with probability (1 + ρ)/2 and is drawn into a second 64-pixel channel y:
"background" paints the whole channel with c (a simple, rank-one spurious feature),
"foreground" draws the digit itself in the channel with sign c (a complex one). The
colour channel gets N(0, noise²) pixel noise; the core image is left as it is.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np


@dataclasses.dataclass(frozen=True)
class Setting:
    """A Gaussian experiment: correlation, spectra decays and samples per dimension.

    rho: canonical correlation of x and y; x_decay, y_decay: s_k ∝ k^(−decay) (0 = flat);
    n_per_d: n = n_per_d · d, so n / D = n_per_d / 2 (under-parameterised when > 2).
    """
    rho: float
    x_decay: float = 0.0
    y_decay: float = 0.0
    n_per_d: float = 3.0
    description: str = ""


SETTINGS: dict[str, Setting] = {
    "base": Setting(0.8, description="ρ = 0.8, flat spectra, n = 1.5 D"),
    "weak_corr": Setting(0.4, description="ρ = 0.4 (large Schur complement), n = 1.5 D"),
    "strong_corr": Setting(0.95, description="ρ = 0.95 (small Schur complement), n = 1.5 D"),
    "simple_y": Setting(0.8, y_decay=1.0,
                        description="ρ = 0.8, s_y ∝ 1/k (simple y), n = 1.5 D"),
    "overparam": Setting(0.8, n_per_d=1.0, description="ρ = 0.8, flat spectra, n = 0.5 D"),
}


def power_spectrum(d: int, decay: float) -> np.ndarray:
    """s_k ∝ k^(−decay), k = 1..d, normalised to mean 1 (tr = d); (d,)."""
    s = np.arange(1, d + 1, dtype=np.float64) ** (-float(decay))
    return s * (d / s.sum())


class Design(NamedTuple):
    """A Gaussian design: z = factor @ [a; b], Σ = factor factorᵀ, g = xᵀθ*_x + noise·ε."""
    factor: np.ndarray    # (D, 2d)
    sigma: np.ndarray     # (D, D)
    theta_x: np.ndarray   # (d,)
    noise: float
    d_x: int
    n: int


def gaussian_design(setting: Setting, d: int, noise: float, rng: np.random.Generator) -> Design:
    """The design of `setting` with d core and d spurious coordinates (D = 2d)."""
    if not 0.0 <= setting.rho <= 1.0:
        raise ValueError(f"the correlation ρ must lie in [0, 1]; got {setting.rho}")
    sx, sy = np.sqrt(power_spectrum(d, setting.x_decay)), np.sqrt(power_spectrum(d, setting.y_decay))
    factor = np.zeros((2 * d, 2 * d))
    factor[:d, :d] = np.diag(sx)
    factor[d:, :d] = setting.rho * np.diag(sy)
    factor[d:, d:] = np.sqrt(1.0 - setting.rho ** 2) * np.diag(sy)
    theta_x = rng.standard_normal(d) / np.sqrt(d)
    return Design(factor, factor @ factor.T, theta_x, float(noise), d,
                  max(1, int(round(setting.n_per_d * d))))


def sample(design: Design, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n samples: z (n, D), clean labels xᵀθ*_x (n,), noisy labels g (n,)."""
    z = rng.standard_normal((n, design.factor.shape[1])) @ design.factor.T
    clean = z[:, :design.d_x] @ design.theta_x
    return z, clean, clean + design.noise * rng.standard_normal(n)


def theta_star(design: Design) -> np.ndarray:
    """θ* = [θ*_x; 0], (D,)."""
    return np.concatenate([design.theta_x, np.zeros(design.sigma.shape[0] - design.d_x)])


# ----------------------------------------------------------------------------- coloured digits


def load_digits_images() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 8×8 digits: images (1797, 64) in [0, 1] and digit labels (1797,)."""
    try:
        from sklearn.datasets import load_digits  # noqa: PLC0415  (optional dependency)
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the coloured-digits experiment needs scikit-learn "
                          "(pip install scikit-learn); it ships the 8×8 digits") from err
    data = load_digits()
    return data.data.astype(np.float64) / 16.0, data.target.astype(np.int64)


def coloured_digits(images: np.ndarray, digits: np.ndarray, rho: float, colour: str, tint: float,
                    noise: float, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Core x (N, 64), spurious colour channel y (N, 64), label g (N,) in {−1, +1}.

    x: the images standardised to mean 0 per pixel and unit mean variance (tr Cov x = 64).
    c_i = g_i with probability (1+ρ)/2, else −g_i. y = tint·c·1 + noise
    ("background") or y = tint·c·x_raw/std + noise ("foreground", the digit drawn in the
    colour channel).
    """
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"the colour-label agreement ρ must lie in [0, 1]; got {rho}")
    if colour not in ("background", "foreground"):
        raise ValueError(f"colour must be 'background' or 'foreground'; got {colour!r}")
    images = np.asarray(images, dtype=np.float64)
    scale = np.sqrt(images.var(axis=0).mean())
    g = np.where(digits >= 5, 1.0, -1.0)
    c = np.where(rng.random(len(g)) < (1.0 + rho) / 2.0, g, -g)
    x = (images - images.mean(axis=0)) / scale
    pattern = np.ones_like(images) if colour == "background" else images / scale
    y = tint * c[:, None] * pattern + noise * rng.standard_normal(images.shape)
    return x, y, g
