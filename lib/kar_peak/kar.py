"""The Kernel Alignment Regulariser (KAR) and the alternatives kept as config options.

See experiments/kar_peak/NOTES.md ("Deriving KAR") for the derivation. In short: training
an INR f = f_θ∘γ in the NTK regime is kernel regression with its NTK Θ; the pointwise-MSE
optimal kernel is K* = E[f* f*ᵀ | D]; KAR pulls the kernel that actually decides the
unobserved values towards K*. Two routes:

* form "ntk" — the literal alignment loss, for tasks whose K* is known (1-D regression):
      R_ntk(θ) = 1 − A(Θ_S(θ), K*_S),   A(K1, K2) = ⟨K1, K2⟩_F / (‖K1‖_F ‖K2‖_F)
  on a fixed set S of points, with Θ_S the empirical NTK (lib.kar_peak.ntk). R_ntk ≥ 0 and
  R_ntk = 0 exactly when Θ_S ∝ K*_S.
* forms "rowcol" / "grid" — K* unknown (images): K* is estimated by a learned similarity
  kernel K_a(x, x') = a(x)·a(x'), a(x) = softmax(g_θ'(x)) ∈ Δ^r (an attention network with r
  outputs), and the regulariser asks the INR to be self-consistent under the induced smoother
  P = rownorm(K_a − diag K_a):
      R_sq(θ, θ') = (1/N) ‖f − P f‖²                       (residual "squared")
      R_lap(θ, θ') = Σ_ij A_ij (f_i − f_j)² / (2 Σ_ij A_ij)  (residual "laplacian", A = K_a − diag)
  The penalty λ R_sq = λ fᵀ(I − P)ᵀ(I − P)f turns the kernel regression with Θ into a MAP
  estimate with prior precision Θ⁻¹ + λ(I − P)ᵀ(I − P), i.e. the effective kernel
  (Θ⁻¹ + λ L)⁻¹ keeps the directions P leaves invariant (where the signal lives, f* ≈ P f*)
  and shrinks the others: its alignment with f* f*ᵀ ≈ K* rises. "grid" uses one attention net
  over all pixel coordinates (N×N similarity, applied in O(N r)); "rowcol" uses two 1-D
  attention nets, for rows and columns (H×H and W×W similarities, applied to the image
  matrix from both sides, as in the authors' earlier INRR regulariser).
"""
from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from lib.kar_peak.encodings import positional_encoding
from lib.kar_peak.metrics import alignment

FORMS = ("rowcol", "grid", "ntk")
RESIDUALS = ("squared", "laplacian")


class AttentionNet(nn.Module):
    """Coordinates (n, d) -> softmax similarity features a(x) (n, rank), rows on the simplex."""
    rank: int = 100
    width: int = 64
    levels: int = 6

    @nn.compact
    def __call__(self, x):
        h = jnp.concatenate([x, positional_encoding(x, self.levels)], axis=-1)
        h = nn.relu(nn.Dense(self.width)(h))
        return nn.softmax(nn.Dense(self.rank)(h), axis=-1)


def _parts(a: jnp.ndarray, f: jnp.ndarray):
    """For A = a aᵀ − diag(a aᵀ): (A f, row sums D, fᵀ-free pieces) in O(n r C)."""
    self_sim = jnp.sum(a * a, axis=-1)                          # (n,) diagonal of a aᵀ
    af = a @ (a.T @ f) - self_sim[:, None] * f                  # (n, C)
    deg = a @ jnp.sum(a, axis=0) - self_sim                     # (n,)
    return af, deg


def smooth(a: jnp.ndarray, f: jnp.ndarray) -> jnp.ndarray:
    """P f with P = rownorm(a aᵀ − diag): a (n, r), f (n, C) -> (n, C)."""
    af, deg = _parts(a, f)
    return af / (deg[:, None] + 1e-12)


def self_consistency(a: jnp.ndarray, f: jnp.ndarray, residual: str = "squared") -> jnp.ndarray:
    """R_sq or R_lap of the module docstring for one similarity a (n, r) and values f (n, C)."""
    if residual == "squared":
        return jnp.mean((f - smooth(a, f)) ** 2)
    if residual == "laplacian":
        af, deg = _parts(a, f)
        energy = jnp.sum(deg[:, None] * f * f) - jnp.sum(f * af)   # ½ Σ_ij A_ij (f_i − f_j)²·2
        return energy / (jnp.sum(deg) * f.shape[-1] + 1e-12)
    raise ValueError(f"unknown KAR residual {residual!r}; allowed: {RESIDUALS}")


def kar_rowcol(img: jnp.ndarray, a_row: jnp.ndarray, a_col: jnp.ndarray,
               residual: str = "squared") -> jnp.ndarray:
    """Row and column self-consistency of an (H, W, C) image: a_row (H, r), a_col (W, r)."""
    h, w, c = img.shape
    rows = img.reshape(h, w * c)                                # each row is one point
    cols = jnp.transpose(img, (1, 0, 2)).reshape(w, h * c)      # each column is one point
    return self_consistency(a_row, rows, residual) + self_consistency(a_col, cols, residual)


def kar_grid(values: jnp.ndarray, a: jnp.ndarray, residual: str = "squared") -> jnp.ndarray:
    """Self-consistency over all N pixels: values (N, C), a (N, r)."""
    return self_consistency(a, values, residual)


def kar_ntk(ntk: jnp.ndarray, target: jnp.ndarray, centered: bool = False) -> jnp.ndarray:
    """R_ntk = 1 − A(Θ, K*) ∈ [0, 2]; zero exactly when Θ is a positive multiple of K*."""
    return 1.0 - alignment(ntk, target, centered)
